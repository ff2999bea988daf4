package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/discovery"
)

// defaultServicesBase is where services ls looks without a BASE.
const defaultServicesBase = "/services"

var servicesCommand = &command{
	name:     "services",
	synopsis: "ls [BASE] | get BASE NAME | register BASE NAME --address A --port P [FLAGS]",
	brief:    "ls|get|register",
	summary:  "list, read or register service instances (Curator's service discovery)",
	help: `
  services ls [BASE]             list the services under BASE (default /services)
  services get BASE NAME         list the instances of service NAME
  services register BASE NAME    register an instance and keep it until interrupted

Services are registered as Apache Curator's ServiceDiscovery does (one JSON
node per instance under BASE/NAME), so Java and Python services find the
instances zkcoord registers and the other way round. register creates an
ephemeral node: it disappears when zkcoord ends or its session is lost (then
zkcoord exits with status 3). It prints the instance's node once registered.

Examples:
  zkcoord services register /services billing --address 10.0.0.5 --port 8080
  zkcoord services get /services billing --json
`,
	run: runServices,
}

func runServices(a *app, cmd *command, args []string) error {
	sub, fs, args, err := a.subFlags(cmd, args, "ls", "get", "register")
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "ls, get: print JSON")
	address := fs.String("address", "", "register: the instance's host name or IP `address`")
	port := fs.Int("port", 0, "register: the instance's `port`")
	id := fs.String("id", "", "register: the instance `id` (default: a random UUID)")
	payload := fs.String("payload", "", "register: a `JSON` value stored with the instance")
	pos, _, err := fs.parse(args)
	if err != nil {
		return err
	}
	base := defaultServicesBase
	var name string
	switch sub {
	case "ls":
		if len(pos) > 1 {
			return usagef("services ls: unexpected argument %q", pos[1])
		}
		if len(pos) == 1 {
			base = pos[0]
		}
	default:
		if err := fs.args(pos, "BASE", "NAME"); err != nil {
			return err
		}
		base, name = pos[0], pos[1]
	}
	if err := zkcoord.ValidatePath(base); err != nil {
		return usagef("services: %v", err)
	}
	if sub == "register" {
		if *address == "" || *port <= 0 || *port > 65535 {
			return usagef("services register: give --address and a --port from 1 to 65535")
		}
		if *payload != "" && !json.Valid([]byte(*payload)) {
			return usagef("services register: --payload is not JSON")
		}
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	d, err := discovery.New(sess, base)
	if err != nil {
		return usagef("services: %v", err)
	}
	switch sub {
	case "ls":
		names, err := d.Names(ctx)
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return fmt.Errorf("listing the services under %s: %w", base, err)
		}
		if *asJSON {
			if names == nil {
				names = []string{}
			}
			return a.printJSON(names)
		}
		for _, n := range names {
			a.printf("%s\n", n)
		}
		return nil
	case "get":
		ins, err := d.Instances(ctx, name)
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return fmt.Errorf("reading the instances of %s: %w", name, err)
		}
		if *asJSON {
			if ins == nil {
				ins = []discovery.Instance{}
			}
			return a.printJSON(ins)
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tADDRESS\tPORT\tENABLED\tPAYLOAD")
		for _, in := range ins {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", in.ID, in.Address, portString(in.Port), !in.Disabled, in.Payload)
		}
		return tw.Flush()
	}
	in := discovery.Instance{Name: name, ID: *id, Address: *address, Port: *port}
	if *payload != "" {
		in.Payload = json.RawMessage(*payload)
	}
	reg, err := d.Register(ctx, in)
	if err != nil {
		return fmt.Errorf("registering %s: %w", name, err)
	}
	go watchSession(a, sess)
	a.printf("registered %s id %s\n", reg.Path(), reg.Instance().ID)
	select {
	case <-a.ctx.Done():
		uctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		defer cancel()
		if err := reg.Unregister(uctx); err != nil {
			a.log.Warn("unregistering", "path", reg.Path(), "err", err)
		}
		return nil
	case <-sess.Done():
		return lostf("the session ended, and with it the registration %s: %v", reg.Path(), sess.Err())
	}
}

func portString(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}
