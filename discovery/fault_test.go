package discovery

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A DynamicSequential registration whose create commits and whose reply
// is lost with the connection: the registration must still make exactly
// one node, the one it reports, and Unregister must leave none. A second
// node would stay registered, and be handed out by providers, until the
// Session ends.
func TestSequentialRegistrationWhoseReplyIsLostCreatesOneNode(t *testing.T) {
	n := 0
	testkit.UntilLost(t, func(delay time.Duration) bool {
		n++
		return sequentialReplyLost(t, fmt.Sprintf("/svc%d", n), delay)
	})
}

func sequentialReplyLost(t *testing.T, base string, delay time.Duration) (exercised bool) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	proxy := cluster.NewProxy(t)
	registrar := connect(t, func(c *zkcoord.Config) { c.Servers = proxy.Servers() })
	observer := connect(t)
	dir := base + "/web"
	if err := observer.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	_, _, added, err := observer.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	states, stop := context.WithCancel(ctx)
	defer stop()
	suspended := make(chan struct{})
	go func() {
		for st := range registrar.Watch(states) {
			if st.State == zkcoord.Suspended {
				close(suspended)
				return
			}
		}
	}()
	if err := proxy.Delay(delay); err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   *Registration
		err error
	}
	d := newDiscovery(t, registrar, base)
	done := make(chan result, 1)
	go func() {
		r, err := d.Register(ctx, Instance{Name: "web", ID: "seq", Address: "h", ServiceType: DynamicSequential})
		done <- result{r, err}
	}()
	returned := func(res result) bool {
		if err := proxy.Heal(); err != nil {
			t.Fatal(err)
		}
		if res.err != nil {
			t.Fatal(res.err)
		}
		return false
	}
	select {
	case <-added: // committed; the reply is still in the slowed link
	case res := <-done:
		return returned(res)
	case <-ctx.Done():
		t.Fatal("the create never reached the server")
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-suspended: // the registrar lost the connection with the reply
	case res := <-done:
		return returned(res)
	case <-ctx.Done():
		t.Fatal("the registrar never noticed the cut")
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("Register never returned")
	}
	if res.err != nil {
		t.Fatalf("Register: %v", res.err)
	}
	kids, _, err := observer.Children(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || zkcoord.Join(dir, kids[0]) != res.r.Path() {
		t.Fatalf("registered once as %s, nodes %q", res.r.Path(), kids)
	}
	if err := res.r.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	if kids, _, err := observer.Children(ctx, dir); err != nil || len(kids) != 0 {
		t.Fatalf("after Unregister: nodes %q, %v", kids, err)
	}
	return true
}
