package launch

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord/internal/fanout"
)

// Group tracks processes and kills them all on Close. The zero value is
// ready to use.
type Group struct {
	mu     sync.Mutex
	procs  []*Proc
	closed bool
}

// Start starts a process (see [Start]) that Close will kill.
func (g *Group) Start(ctx context.Context, spec Spec, sink func(line string)) (*Proc, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, ErrClosed
	}
	p, err := Start(ctx, spec, sink)
	if err != nil {
		return nil, err
	}
	g.procs = append(g.procs, p)
	return p, nil
}

// Procs returns the processes started so far, in order.
func (g *Group) Procs() []*Proc {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.procs)
}

// Close kills every process of the group and returns once all are gone.
// Later calls to Start fail with [ErrClosed]. Close is idempotent.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	procs := g.procs
	g.mu.Unlock()
	fanout.Each(len(procs), len(procs), func(i int) { procs[i].Kill() })
}

// HelperTest is the test function [Self] runs in the re-executed binary.
const HelperTest = "TestHelperProcess"

// RoleEnv is the environment variable naming a helper process's role.
const RoleEnv = "ZKCOORD_LAUNCH_ROLE"

// Self returns a Spec that re-executes the running test binary to run only
// [HelperTest], with [RoleEnv] set to role and args available to the child
// through [Args]. A race-enabled child skips the race detector's one-second
// pause at exit (GORACE atexit_sleep_ms=0, added to any GORACE options).
func Self(name, role string, args ...string) Spec {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return Spec{
		Path: exe,
		Args: append([]string{"-test.run=^" + HelperTest + "$", "-test.count=1", "--"}, args...),
		Env:  []string{RoleEnv + "=" + role, "GORACE=" + gorace},
		Name: name,
	}
}

// Role returns the role of a helper process started with [Self], or "" in
// an ordinary test run.
func Role() string { return os.Getenv(RoleEnv) }

// Args returns the arguments given to [Self], in a helper process.
func Args() []string {
	if i := slices.Index(os.Args, "--"); i >= 0 {
		return slices.Clone(os.Args[i+1:])
	}
	return nil
}
