package discovery

import (
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A provider whose Session expired hands out nothing more: the instances
// it last saw may be gone since, and it no longer learns of changes. Get
// and Instances fail with the cause.
func TestProviderFailsAfterItsSessionExpired(t *testing.T) {
	registrar := connect(t)
	ctx := testkit.Ctx(t, wait)
	register(t, newDiscovery(t, registrar, "/svc"), Instance{Name: "web", ID: "a", Address: "h"})
	sess := connect(t)
	p, err := newDiscovery(t, sess, "/svc").NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if in, err := p.Get(); err != nil || in.ID != "a" {
		t.Fatalf("Get before the end: %v, %v", in.ID, err)
	}
	if err := cluster.ExpireSession(ctx, sess.ID(), sess.Password()); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if in, err := p.Get(); !errors.Is(err, ErrStopped) || !errors.Is(err, zkcoord.ErrSessionExpired) {
		t.Errorf("Get after the Session expired = %v, %v; want ErrStopped and ErrSessionExpired", in.ID, err)
	}
	if in, err := p.Instances(); !errors.Is(err, ErrStopped) || !errors.Is(err, zkcoord.ErrSessionExpired) {
		t.Errorf("Instances after the Session expired = %v, %v; want ErrStopped and ErrSessionExpired", ids(in), err)
	}
}

// A closed provider hands out nothing either.
func TestProviderFailsAfterClose(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	register(t, d, Instance{Name: "web", ID: "a", Address: "h"})
	p, err := d.NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(); !errors.Is(err, ErrStopped) {
		t.Errorf("Get after Close: %v, want ErrStopped", err)
	}
	if _, err := p.Instances(); !errors.Is(err, ErrStopped) {
		t.Errorf("Instances after Close: %v, want ErrStopped", err)
	}
}
