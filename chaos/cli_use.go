package chaos

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// RoleUse is the role of the command the zkcoord binary runs in the cli
// workload (see useMain).
const RoleUse = "use"

// useMain is the command the zkcoord binary runs under a lock, a
// leadership or a resource in the cli workload, as a grandchild (through a
// shell): it reads the fencing token from ZKCOORD_TOKEN (and the resource
// from ZKCOORD_RESOURCE when -resource is empty), has the service record
// that it acquired the resource, uses it every -every, and after a random
// time in -hold (never with -hold 0) has the service record its release
// and exits 0. On SIGTERM it goes on using the resource for -linger before
// it releases and exits, as a worker finishing its current job would: only
// a supervisor that kills it in time keeps it from outliving its claim.
// With -ignore-term it takes no notice of SIGTERM at all: only its hold
// time or SIGKILL ends it. If it is killed, the service records its
// release when its connection closes.
func useMain(args []string) int {
	fs := flag.NewFlagSet("use", flag.ContinueOnError)
	socket := fs.String("socket", "", "service socket")
	name := fs.String("name", "", "client name (the zkcoord process's)")
	resource := fs.String("resource", "", "resource (default $ZKCOORD_RESOURCE)")
	every := fs.Duration("every", 100*time.Millisecond, "time between uses")
	holdMin := fs.Duration("hold-min", 0, "shortest time to hold the resource (0 with -hold-max 0: until stopped)")
	holdMax := fs.Duration("hold-max", 0, "longest time to hold the resource")
	linger := fs.Duration("linger", 0, "how long to go on after SIGTERM")
	ignoreTerm := fs.Bool("ignore-term", false, "take no notice of SIGTERM")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *resource == "" {
		*resource = os.Getenv("ZKCOORD_RESOURCE")
	}
	token, err := strconv.ParseInt(os.Getenv("ZKCOORD_TOKEN"), 10, 64)
	if err != nil || *resource == "" {
		fmt.Fprintln(os.Stderr, "use: no ZKCOORD_TOKEN or resource")
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	svc, err := dialService(*socket, *name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "use:", err)
		return 1
	}
	defer svc.close()
	if err := svc.acquire(*resource, token); err != nil {
		fmt.Fprintln(os.Stderr, "use:", err)
		return 1
	}
	var until <-chan time.Time
	if *holdMax > 0 {
		hold := *holdMin + rand.N(*holdMax-*holdMin+1)
		until = time.After(hold)
	}
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		// A refused use is not a reason to stop: stopping is the
		// supervisor's job, and the checker is to see what it does.
		if err := svc.use(*resource, token); err != nil && !errors.Is(err, errStale) {
			fmt.Fprintln(os.Stderr, "use:", err)
			return 1
		}
		select {
		case <-tick.C:
			continue
		case <-until:
		case <-term:
			if *ignoreTerm {
				continue
			}
			lingerUse(svc, *resource, token, *every, *linger)
		}
		if err := svc.release(*resource); err != nil {
			fmt.Fprintln(os.Stderr, "use:", err)
			return 1
		}
		return 0
	}
}

// lingerUse goes on using resource for d.
func lingerUse(svc *serviceConn, resource string, token int64, every, d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		_ = svc.use(resource, token)
		time.Sleep(every)
	}
}
