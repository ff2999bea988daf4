package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/discovery"
)

// defaultServicesBase is where services ls looks without a BASE.
const defaultServicesBase = "/services"

// servicesOptions are the flags of services.
type servicesOptions struct {
	asJSON    bool
	address   string
	port      int
	id        string
	payload   string
	noRecover bool
}

func newServicesCommand(a *app) *cobra.Command {
	var o servicesOptions
	cmd := &cobra.Command{
		Use:         "services ls [BASE] | get BASE NAME | register BASE NAME --address A --port P [FLAGS]",
		Short:       "list, read or register service instances (Curator's service discovery)",
		Annotations: brief("ls|get|register"),
		Long: `
  services ls [BASE]             list the services under BASE (default /services)
  services get BASE NAME         list the instances of service NAME
  services register BASE NAME    register an instance and keep it until interrupted

Services are registered as Apache Curator's ServiceDiscovery does (one JSON
node per instance under BASE/NAME), so Java and Python services find the
instances zkcoord registers and the other way round. get skips the nodes
under NAME that are not instances, and says so on standard error, one line
each.

register creates an ephemeral node, which lives as long as zkcoord's
ZooKeeper session, and prints "registered NODE id ID" each time it has
registered the instance. While zkcoord is cut off from ZooKeeper the node
stays for as long as the session lives. When the session is lost or
expires, the node goes with it, and zkcoord registers the instance again
(same id, address, port and payload) with a new session once a server
answers; with --no-recover it exits with status 3 instead. Interrupted
(SIGINT, SIGTERM), it unregisters the instance and exits 0. It exits 1 if
the instance cannot be registered, or if ZooKeeper cannot be reached
within --connect-timeout at the start.

Examples:
  zkcoord services register /services billing --address 10.0.0.5 --port 8080
  zkcoord services get /services billing --json
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.BoolVar(&o.asJSON, "json", false, "ls, get: print JSON")
	fs.StringVar(&o.address, "address", "", "register: the instance's host name or IP `address`")
	fs.IntVar(&o.port, "port", 0, "register: the instance's `port`")
	fs.StringVar(&o.id, "id", "", "register: the instance `id` (default: a random UUID)")
	fs.StringVar(&o.payload, "payload", "", "register: a `JSON` value stored with the instance")
	fs.BoolVar(&o.noRecover, "no-recover", false, "register: exit with status 3 when the session is lost, instead of registering again")
	addSubcommands(cmd, nil, func(cmd *cobra.Command, args []string) error { return runServices(a, cmd, args, &o) },
		subcommand{"ls [BASE]", "list the services under BASE"},
		subcommand{"get BASE NAME", "list the instances of service NAME"},
		subcommand{"register BASE NAME", "register an instance and keep it until interrupted"})
	return cmd
}

func runServices(a *app, cmd *cobra.Command, pos []string, o *servicesOptions) error {
	sub := cmd.Name()
	base := defaultServicesBase
	var name string
	switch sub {
	case "ls":
		if len(pos) > 1 {
			return cli.Usagef("services ls: unexpected argument %q", pos[1])
		}
		if len(pos) == 1 {
			base = pos[0]
		}
	default:
		if err := wantArgs(cmd, pos, "BASE", "NAME"); err != nil {
			return err
		}
		base, name = pos[0], pos[1]
	}
	if err := zkcoord.ValidatePath(base); err != nil {
		return cli.Usagef("services: %v", err)
	}
	if sub == "register" {
		if o.address == "" || o.port <= 0 || o.port > 65535 {
			return cli.Usagef("services register: give --address and a --port from 1 to 65535")
		}
		if o.payload != "" && !json.Valid([]byte(o.payload)) {
			return cli.Usagef("services register: --payload is not JSON")
		}
		return registerService(a, base, name, o)
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	d, err := discovery.New(sess, base)
	if err != nil {
		return cli.Usagef("services: %v", err)
	}
	if sub == "ls" {
		names, err := d.Names(ctx)
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return fmt.Errorf("listing the services under %s: %w", base, err)
		}
		if o.asJSON {
			if names == nil {
				names = []string{}
			}
			return a.printJSON(names)
		}
		for _, n := range names {
			a.printf("%s\n", n)
		}
		return nil
	}
	ins, skipped, err := readInstances(ctx, sess, d, base, name)
	if err != nil {
		return fmt.Errorf("reading the instances of %s: %w", name, err)
	}
	for _, err := range skipped {
		why := strings.TrimPrefix(cli.Message(err), cli.Message(zkcoord.ErrBadData)+": ")
		fmt.Fprintf(a.Stderr, "zkcoord: services get: skipped a node: %s\n", why)
	}
	if o.asJSON {
		return a.printJSON(ins)
	}
	tw := cli.Table(a.Stdout)
	fmt.Fprintln(tw, "ID\tADDRESS\tPORT\tENABLED\tPAYLOAD")
	for _, in := range ins {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", in.ID, in.Address, portString(in.Port), !in.Disabled, in.Payload)
	}
	return tw.Flush()
}

// readInstances reads the instances of the service name, by id, as
// Discovery.Instances does, and returns apart why each node that is not an
// instance was skipped.
func readInstances(ctx context.Context, sess *zkcoord.Session, d *discovery.Discovery, base, name string) (
	[]discovery.Instance, []error, error) {
	nodes, _, err := sess.Children(ctx, zkcoord.Join(base, name))
	if errors.Is(err, zkcoord.ErrNoNode) {
		return []discovery.Instance{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(nodes)
	ins := []discovery.Instance{}
	var skipped []error
	for _, n := range nodes {
		in, err := d.Instance(ctx, name, n)
		switch {
		case errors.Is(err, discovery.ErrNotFound): // unregistered meanwhile
		case errors.Is(err, zkcoord.ErrBadData):
			skipped = append(skipped, err)
		case err != nil:
			return nil, nil, err
		default:
			ins = append(ins, in)
		}
	}
	slices.SortStableFunc(ins, func(a, b discovery.Instance) int { return strings.Compare(a.ID, b.ID) })
	return ins, skipped, nil
}

// registerService registers an instance and keeps it registered until
// interrupted: after a session loss it registers it again on a new
// Session (the same instance, as last registered), or, with --no-recover,
// exits with status 3.
func registerService(a *app, base, name string, o *servicesOptions) error {
	if err := a.Setup(); err != nil {
		return err
	}
	in := discovery.Instance{Name: name, ID: o.id, Address: o.address, Port: o.port}
	if o.payload != "" {
		in.Payload = json.RawMessage(o.payload)
	}
	var opts []zkcoord.SuperviseOption
	if o.noRecover {
		opts = append(opts, zkcoord.WithRestartIf(func(error) bool { return false }))
	}
	var reg *discovery.Registration
	err := a.supervise(a.Ctx, func(ctx context.Context, sess *zkcoord.Session) error {
		d, err := discovery.New(sess, base)
		if err != nil {
			return cli.Usagef("services: %v", err)
		}
		rctx, cancel := a.opContext(sess)
		defer cancel()
		if reg == nil {
			reg, err = d.Register(rctx, in)
		} else {
			err = reg.Reregister(rctx, d)
		}
		if err != nil {
			return fmt.Errorf("registering %s: %w", name, err)
		}
		a.printf("registered %s id %s\n", reg.Path(), reg.Instance().ID)
		<-ctx.Done() // interrupted, or the Session ended
		if a.Ctx.Err() != nil {
			uctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
			defer cancel()
			if err := reg.Unregister(uctx); err != nil {
				a.Log.Warn("unregistering", "path", reg.Path(), "err", err)
			}
			return nil
		}
		if o.noRecover {
			return cli.Lostf("the session ended, and with it the registration %s: %v", reg.Path(), sess.Err())
		}
		a.Log.Warn("the session ended, and with it the registration: registering again with a new session",
			"path", reg.Path(), "err", sess.Err())
		return sess.Err()
	}, opts...)
	if a.Ctx.Err() != nil {
		return nil
	}
	return err
}

func portString(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}
