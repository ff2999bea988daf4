package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/barrier"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/discovery"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/group"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/queue"
	"github.com/zkcoord/zkcoord/rebalance"
)

// startWorkers starts n rebalancer clients of group under root, each on a
// Session of its own, after registering resources; they stop with the
// test.
func startWorkers(t *testing.T, root, group string, n int, resources ...string) []*rebalance.Client {
	t.Helper()
	ctx := testkit.Ctx(t, time.Minute)
	admin := connect(t)
	for _, r := range resources {
		if err := rebalance.AddResource(ctx, admin, zkcoord.Join(root, group), r); err != nil {
			t.Fatalf("add resource %s: %v", r, err)
		}
	}
	var out []*rebalance.Client
	for i := range n {
		c := startWorker(t, root, group, fmt.Sprintf("worker-%d", i))
		out = append(out, c)
	}
	return out
}

func startWorker(t *testing.T, root, group, name string) *rebalance.Client {
	t.Helper()
	h := rebalance.Handler{
		Assigned:   func(context.Context, rebalance.Assignment) error { return nil },
		Unassigned: func(rebalance.Assignment, error) error { return nil },
	}
	c, err := rebalance.Start(testkit.Ctx(t, time.Minute), connect(t), zkcoord.Join(root, group), h,
		rebalance.WithName(name))
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Stop(testkit.Ctx(t, time.Minute)) })
	return c
}

// sameGroup compares the console's view of a group with rebalance.Describe.
func sameGroup(g *console.GroupView, d *rebalance.Description) error {
	var ids, want []string
	for _, m := range g.Members {
		ids = append(ids, m.ID)
	}
	for _, m := range d.Members {
		want = append(want, m.ID)
	}
	switch {
	case !slices.Equal(ids, want):
		return fmt.Errorf("members %v, Describe says %v", ids, want)
	case g.Coordinator != d.Coordinator:
		return fmt.Errorf("coordinator %s, Describe says %s", g.Coordinator, d.Coordinator)
	case g.Generation != d.Generation || g.Term != d.Term:
		return fmt.Errorf("generation/term %d/%d, Describe says %d/%d", g.Generation, g.Term, d.Generation, d.Term)
	case g.Rebalancing != d.Rebalancing:
		return fmt.Errorf("rebalancing %v, Describe says %v", g.Rebalancing, d.Rebalancing)
	case !maps.EqualFunc(g.Allocation, d.Allocation, slices.Equal):
		return fmt.Errorf("allocation %v, Describe says %v", g.Allocation, d.Allocation)
	case len(g.Barriers) != len(d.Barriers):
		return fmt.Errorf("%d barriers, Describe says %d", len(g.Barriers), len(d.Barriers))
	}
	for _, b := range d.Barriers {
		if got := g.Barriers[b.Resource]; got.Client != b.Client || got.Token != b.Token || got.Session != b.Session {
			return fmt.Errorf("barrier %s: %+v, Describe says %+v", b.Resource, got, b)
		}
	}
	return nil
}

// TestRecognisesRecipes runs real recipes and checks that the console
// finds each by its layout and reads its state as the recipe's own
// packages do.
func TestRecognisesRecipes(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	s1, s2 := connect(t), connect(t)

	// An election with a leader and a follower.
	e1, _ := election.New(s1, "/app/elect", election.WithID("alpha"))
	e2, following := standingBy(s2, "/app/elect", "beta")
	lead, err := e1.Campaign(ctx)
	if err != nil {
		t.Fatalf("campaign: %v", err)
	}
	go e2.Campaign(ctx) // stands by behind the leader until the test ends
	select {
	case <-following:
	case <-ctx.Done():
		t.Fatal("the second candidate never stood by")
	}

	// A mutex with a holder and a waiter.
	m1, _ := lock.NewMutex(s1, "/app/lock")
	m2, _ := lock.NewMutex(s2, "/app/lock")
	lease, err := m1.Lock(ctx)
	if err != nil {
		t.Fatalf("lock: %v", err)
	}
	second := make(chan error, 1)
	go func() { _, err := m2.Lock(ctx); second <- err }()

	// A queue with two items, a counter and a group of three workers.
	q, _ := queue.New(s1, "/app/jobs")
	for _, item := range []string{"a", "b"} {
		if _, err := q.Put(ctx, []byte(item)); err != nil {
			t.Fatalf("put: %v", err)
		}
	}
	cnt, _ := counter.New(s1, "/app/count")
	if _, err := cnt.Add(ctx, 7); err != nil {
		t.Fatalf("counter: %v", err)
	}
	startWorkers(t, "/app/rebalance", "orders", 3, "p0", "p1", "p2", "p3", "p4", "p5", "p6")

	srv := serve(t, connect(t), console.Options{})

	waitView(t, srv, "/app/elect", func(v *console.View) error {
		e := v.Election
		if e.Leader == nil || e.Leader.ID != "alpha" || !e.Acting || len(e.Participants) != 2 || e.Participants[1].ID != "beta" {
			return fmt.Errorf("election %+v", e)
		}
		if e.Leader.Token != lead.Token() || e.Term != lead.Term() || e.Leader.Session != fmt.Sprintf("0x%x", s1.ID()) {
			return fmt.Errorf("leader %+v term %d, want token %d term %d", e.Leader, e.Term, lead.Token(), lead.Term())
		}
		return nil
	})
	waitView(t, srv, "/app/lock", func(v *console.View) error {
		l := v.Lock
		if v.Kind != console.KindMutex || len(l.Holders) != 1 || len(l.Waiters) != 1 {
			return fmt.Errorf("lock %+v", l)
		}
		if l.Holders[0].Token != lease.Token() || l.Waiters[0].Session != fmt.Sprintf("0x%x", s2.ID()) {
			return fmt.Errorf("holder %+v (token %d), waiter %+v", l.Holders[0], lease.Token(), l.Waiters[0])
		}
		return nil
	})
	waitView(t, srv, "/app/jobs", func(v *console.View) error {
		if v.Queue.Depth != 2 || v.Queue.Oldest.IsZero() {
			return fmt.Errorf("queue %+v", v.Queue)
		}
		return nil
	})
	waitView(t, srv, "/app/count", func(v *console.View) error {
		if v.Counter == nil || v.Counter.Value != 7 {
			return fmt.Errorf("counter %+v", v.Counter)
		}
		return nil
	})
	admin := connect(t)
	waitView(t, srv, "/app/rebalance/orders", func(v *console.View) error {
		d, err := rebalance.Describe(ctx, admin, zkcoord.Join("/app/rebalance", "orders"))
		if err != nil {
			return err
		}
		if len(d.Members) != 3 || d.Rebalancing {
			return fmt.Errorf("group not settled yet: %d members, rebalancing %v", len(d.Members), d.Rebalancing)
		}
		for _, m := range v.Group.Members {
			if !strings.HasPrefix(m.Name, "worker-") || m.Host == "" || m.PID == 0 {
				return fmt.Errorf("member %+v lacks name, host or pid", m)
			}
		}
		return sameGroup(v.Group, d)
	})

	// Changes show: the lock passes to the waiter, the leader resigns.
	if err := m1.Unlock(ctx); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second lock: %v", err)
	}
	waitView(t, srv, "/app/lock", func(v *console.View) error {
		if len(v.Lock.Holders) != 1 || v.Lock.Holders[0].Session != fmt.Sprintf("0x%x", s2.ID()) {
			return fmt.Errorf("holders %+v", v.Lock.Holders)
		}
		return nil
	})
	if err := lead.Resign(ctx); err != nil {
		t.Fatalf("resign: %v", err)
	}
	waitView(t, srv, "/app/elect", func(v *console.View) error {
		if l := v.Election.Leader; l == nil || l.ID != "beta" || !v.Election.Acting {
			return fmt.Errorf("election %+v", v.Election)
		}
		return nil
	})
	st, err := getState(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range st.Events {
		texts = append(texts, e.Path+": "+e.Text)
	}
	for _, want := range []string{"/app/lock: granted to", "/app/elect: leader: beta"} {
		if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("timeline lacks %q:\n%s", want, strings.Join(texts, "\n"))
		}
	}
}

// TestNamedElection: an election named in Options.Paths is followed with
// its -term and -leader nodes, which lie outside the path's tree: the
// leader takes office, resigns, and the next one takes office.
func TestNamedElection(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	s1, s2 := connect(t), connect(t)
	e1, _ := election.New(s1, "/named/elect", election.WithID("alpha"))
	e2, following := standingBy(s2, "/named/elect", "beta")
	lead, err := e1.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go e2.Campaign(ctx) // stands by behind the leader until the test ends
	select {
	case <-following:
	case <-ctx.Done():
		t.Fatal("the second candidate never stood by")
	}
	srv := serve(t, connect(t), console.Options{Paths: []string{"election:/named/elect"}})
	waitView(t, srv, "/named/elect", func(v *console.View) error {
		if e := v.Election; e.Leader == nil || e.Leader.ID != "alpha" || !e.Acting || e.Term != lead.Term() {
			return fmt.Errorf("election %+v, want alpha acting in term %d", e, lead.Term())
		}
		return nil
	})
	if err := lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitView(t, srv, "/named/elect", func(v *console.View) error {
		if e := v.Election; e.Leader == nil || e.Leader.ID != "beta" || !e.Acting || e.Term <= lead.Term() {
			return fmt.Errorf("election %+v, want beta acting in a term after %d", e, lead.Term())
		}
		return nil
	})
}

// TestRecipeGone checks that a recipe whose node is deleted leaves the
// console.
func TestRecipeGone(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	m, _ := lock.NewMutex(sess, "/a/b/lock")
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, connect(t), console.Options{})
	waitView(t, srv, "/a/b/lock", func(*console.View) error { return nil })
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recipe.EnsureDeleted(ctx, sess, "/a/b/lock"); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "lock gone", func() error {
		st, err := getState(t, srv)
		if err != nil {
			return err
		}
		if v, ok := st.Views["/a/b/lock"]; ok {
			return fmt.Errorf("still shown: %+v", v)
		}
		return nil
	})
}

// TestNamedPathsWaitForTheirNodes: a recipe named in Options.Paths before
// its node exists is shown once it does.
func TestNamedPathsWaitForTheirNodes(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	srv := serve(t, connect(t), console.Options{Paths: []string{"lock:/later/lock", "barrier:/later/gate"}})
	waitView(t, srv, "/later/gate", func(v *console.View) error {
		if v.Barrier.Set {
			return fmt.Errorf("barrier shown set")
		}
		return nil
	})
	testkit.WaitFor(t, 30*time.Second, "lock shown missing", func() error {
		st, err := getState(t, srv)
		if err != nil {
			return err
		}
		if v := st.Views["/later/lock"]; v == nil || v.Error == "" {
			return fmt.Errorf("view %+v", v)
		}
		return nil
	})
	sess := connect(t)
	m, _ := lock.NewMutex(sess, "/later/lock")
	lease, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gate, _ := barrier.New(sess, "/later/gate")
	if err := gate.Set(ctx); err != nil {
		t.Fatal(err)
	}
	waitView(t, srv, "/later/lock", func(v *console.View) error {
		if len(v.Lock.Holders) != 1 || v.Lock.Holders[0].Token != lease.Token() {
			return fmt.Errorf("lock %+v", v.Lock)
		}
		return nil
	})
	waitView(t, srv, "/later/gate", func(v *console.View) error {
		if !v.Barrier.Set {
			return fmt.Errorf("barrier shown open")
		}
		return nil
	})
}

// TestRootCreatedLater: a console started before its root exists finds
// the recipes under it once it is created.
func TestRootCreatedLater(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	srv := serve(t, connect(t), console.Options{Root: "/late/root"})
	testkit.Eventually(t, 30*time.Second, "settled", func() bool {
		st, err := getState(t, srv)
		return err == nil && st.Status.Settled
	})
	m, _ := lock.NewMutex(connect(t), "/late/root/app/lock")
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waitView(t, srv, "/late/root/app/lock", func(v *console.View) error {
		if len(v.Lock.Holders) != 1 {
			return fmt.Errorf("lock %+v", v.Lock)
		}
		return nil
	})
}

// TestSessionEndShown: when the console's Session ends, the page is told.
func TestSessionEndShown(t *testing.T) {
	sess := connect(t)
	srv := serve(t, sess, console.Options{})
	testkit.Eventually(t, 30*time.Second, "settled", func() bool {
		st, err := getState(t, srv)
		return err == nil && st.Status.Settled
	})
	if err := cluster.ExpireSession(testkit.Ctx(t, time.Minute), sess.ID(), sess.Password()); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "failure shown", func() error {
		st, err := getState(t, srv)
		if err != nil {
			return err
		}
		if !strings.Contains(st.Status.Failure, "session ended") {
			return fmt.Errorf("status %+v", st.Status)
		}
		return nil
	})
}

// TestRecognisesServicesAndGroups registers real service instances
// (discovery.Register, with UUID ids like a double barrier's members) and
// joins real group members (group.Join), next to a double barrier, and
// checks that the console tells them apart and follows them coming and
// going.
func TestRecognisesServicesAndGroups(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	s1, s2 := connect(t), connect(t)

	d1, _ := discovery.New(s1, "/app/services")
	d2, _ := discovery.New(s2, "/app/services")
	first, err := d1.Register(ctx, discovery.Instance{Name: "billing", Address: "10.0.0.1", Port: 8080, SSLPort: 8443,
		Payload: json.RawMessage(`{"zone": "eu-1"}`)})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if _, err := d2.Register(ctx, discovery.Instance{Name: "billing", ID: "billing-drained", Address: "10.0.0.2", Port: 8080,
		ServiceType: discovery.Static, Disabled: true}); err != nil {
		t.Fatalf("register: %v", err)
	}
	alpha, err := group.Join(ctx, s1, "/app/workers", "alpha", []byte("host-a:7000"))
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	t.Cleanup(func() { _ = alpha.Leave(testkit.Ctx(t, time.Minute)) })
	// A double barrier with one member (a UUID) still gathering.
	dbl, _ := barrier.NewDouble(s2, "/app/batch", 2)
	enterCtx, cancel := context.WithCancel(ctx)
	entered := make(chan struct{})
	go func() {
		defer close(entered)
		_ = dbl.Enter(enterCtx)
	}()
	t.Cleanup(func() { cancel(); <-entered })

	srv := serve(t, connect(t), console.Options{})

	waitView(t, srv, "/app/services/billing", func(v *console.View) error {
		s := v.Service
		if v.Kind != console.KindService || s == nil || s.Name != "billing" || len(s.Instances) != 2 {
			return fmt.Errorf("%s: %+v", v.Kind, s)
		}
		in, drained := s.Instances[0], s.Instances[1]
		if in.ID != first.Instance().ID { // sorted by id: the UUID may come second
			in, drained = drained, in
		}
		if in.ID != first.Instance().ID || drained.ID != "billing-drained" {
			return fmt.Errorf("instances %+v", s.Instances)
		}
		if in.Address != "10.0.0.1" || in.Port != 8080 || in.SSLPort != 8443 || in.Disabled ||
			in.Payload != `{"zone":"eu-1"}` || in.Session != fmt.Sprintf("0x%x", s1.ID()) ||
			in.Registered.UnixMilli() != first.Instance().RegistrationTimeUTC {
			return fmt.Errorf("instance %+v, registered %+v", in, first.Instance())
		}
		if !drained.Disabled || drained.Type != "STATIC" || drained.Session != "" {
			return fmt.Errorf("disabled instance %+v", drained)
		}
		return nil
	})
	waitView(t, srv, "/app/workers", func(v *console.View) error {
		g := v.Membership
		if v.Kind != console.KindMembership || g == nil || len(g.Members) != 1 {
			return fmt.Errorf("%s: %+v", v.Kind, g)
		}
		if mb := g.Members[0]; mb.ID != "alpha" || mb.Data != "host-a:7000" || mb.Session != fmt.Sprintf("0x%x", s1.ID()) ||
			zkcoord.Join("/app/workers", mb.Node) != alpha.Path() {
			return fmt.Errorf("member %+v, joined as %s", mb, alpha.Path())
		}
		return nil
	})
	waitView(t, srv, "/app/batch", func(v *console.View) error {
		if v.Kind != console.KindDoubleBarrier || len(v.Barrier.Members) != 1 || v.Barrier.Ready {
			return fmt.Errorf("%s: %+v", v.Kind, v.Barrier)
		}
		return nil
	})

	// Instances and members come and go.
	second, err := d2.Register(ctx, discovery.Instance{Name: "billing", Address: "10.0.0.3", Port: 9090})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	beta, err := group.Join(ctx, s2, "/app/workers", "beta", nil)
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	waitView(t, srv, "/app/services/billing", func(v *console.View) error {
		if len(v.Service.Instances) != 3 {
			return fmt.Errorf("instances %+v", v.Service.Instances)
		}
		return nil
	})
	waitView(t, srv, "/app/workers", func(v *console.View) error {
		if len(v.Membership.Members) != 2 || v.Membership.Members[1].ID != "beta" {
			return fmt.Errorf("members %+v", v.Membership.Members)
		}
		return nil
	})
	if err := first.Unregister(ctx); err != nil {
		t.Fatalf("unregister: %v", err)
	}
	if err := alpha.Leave(ctx); err != nil {
		t.Fatalf("leave: %v", err)
	}
	waitView(t, srv, "/app/services/billing", func(v *console.View) error {
		if len(v.Service.Instances) != 2 || slices.ContainsFunc(v.Service.Instances, func(in console.Instance) bool {
			return in.ID == first.Instance().ID
		}) {
			return fmt.Errorf("instances %+v", v.Service.Instances)
		}
		return nil
	})
	waitView(t, srv, "/app/workers", func(v *console.View) error {
		if len(v.Membership.Members) != 1 || v.Membership.Members[0].ID != "beta" {
			return fmt.Errorf("members %+v", v.Membership.Members)
		}
		return nil
	})
	if err := beta.Leave(ctx); err != nil {
		t.Fatalf("leave: %v", err)
	}

	st, err := getState(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range st.Events {
		texts = append(texts, e.Path+": "+e.Text)
	}
	for _, want := range []string{
		"/app/services/billing: found service: 2 instances",
		"/app/services/billing: instance " + second.Instance().ID + " registered at 10.0.0.3:9090",
		"/app/services/billing: instance " + first.Instance().ID + " unregistered",
		"/app/workers: found membership: 1 member",
		"/app/workers: member beta joined",
		"/app/workers: member alpha left",
	} {
		if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("timeline lacks %q:\n%s", want, strings.Join(texts, "\n"))
		}
	}
}

// TestRecipeAboveReplacesRecipesBelow: a node whose layout is completed
// later (a semaphore's leases/ created after its locks/ held a waiter)
// becomes one recipe, and what was taken for a recipe below it (locks/ as
// a mutex) leaves the console.
func TestRecipeAboveReplacesRecipesBelow(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	if err := sess.EnsurePath(ctx, "/x/sem/locks"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, "/x/sem/locks/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000000", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, connect(t), console.Options{})
	waitView(t, srv, "/x/sem/locks", func(v *console.View) error {
		if v.Kind != console.KindMutex {
			return fmt.Errorf("kind %s", v.Kind)
		}
		return nil
	})
	if err := sess.EnsurePath(ctx, "/x/sem/leases"); err != nil {
		t.Fatal(err)
	}
	waitView(t, srv, "/x/sem", func(v *console.View) error {
		if v.Kind != console.KindSemaphore || len(v.Lock.Waiters) != 1 {
			return fmt.Errorf("%s: %+v", v.Kind, v.Lock)
		}
		return nil
	})
	testkit.WaitFor(t, 30*time.Second, "locks/ no longer a recipe of its own", func() error {
		st, err := getState(t, srv)
		if err != nil {
			return err
		}
		if v, ok := st.Views["/x/sem/locks"]; ok {
			return fmt.Errorf("still shown: %s", v.Kind)
		}
		return nil
	})
}
