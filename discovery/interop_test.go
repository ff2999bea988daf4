package discovery

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// curator starts a Curator ServiceDiscovery (curator-x-discovery, Debian's
// libcurator-discovery-java) on base, in the test's chroot.
func curator(t *testing.T, ctx context.Context, chroot, base string) *interop.Proc {
	t.Helper()
	p := interop.CompileJava(t, "testdata/DiscoveryPeer.java", "curator-x-discovery.jar").
		Start(t, cluster.ConnectString(), chroot+base)
	if _, err := p.Expect(ctx, "ready"); err != nil {
		t.Fatalf("curator peer: %v\n%s", err, p.Stderr())
	}
	return p
}

// ask sends a command and returns the peer's reply lines up to and
// including the first that starts with one of the prefixes.
func ask(t *testing.T, ctx context.Context, p *interop.Proc, cmd string, until ...string) []string {
	t.Helper()
	if err := p.Send(cmd); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for {
		l, err := p.Next(ctx)
		if err != nil {
			t.Fatalf("%s: %v (so far %q)\n%s", cmd, err, lines, p.Stderr())
		}
		lines = append(lines, l)
		if strings.HasPrefix(l, "error") {
			t.Fatalf("%s: %s", cmd, l)
		}
		for _, u := range until {
			if strings.HasPrefix(l, u) {
				return lines
			}
		}
	}
}

func TestCuratorRegistersGoFinds(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, 2*time.Minute)
	java := curator(t, ctx, sess.Config().Chroot, "/services")
	ask(t, ctx, java, "register web w1 10.0.0.1 8080 8443 zone=eu", "registered")
	ask(t, ctx, java, "register web w2 10.0.0.2 8081 - -", "registered")
	ask(t, ctx, java, "register api a1 10.0.0.3 9000 - -", "registered")

	d := newDiscovery(t, sess, "/services")
	names, err := d.Names(ctx)
	if err != nil || !slices.Equal(names, []string{"api", "web"}) {
		t.Fatalf("Names = %q, %v", names, err)
	}
	got, err := d.Instances(ctx, "web")
	if err != nil || len(got) != 2 {
		t.Fatalf("Instances = %v, %v", got, err)
	}
	w1, w2 := got[0], got[1]
	if w1.Name != "web" || w1.ID != "w1" || w1.Address != "10.0.0.1" || w1.Port != 8080 || w1.SSLPort != 8443 ||
		w1.ServiceType != Dynamic || w1.RegistrationTimeUTC == 0 || w1.Disabled {
		t.Errorf("w1 = %+v", w1)
	}
	var payload map[string]string
	if err := json.Unmarshal(w1.Payload, &payload); err != nil || payload["zone"] != "eu" {
		t.Errorf("w1 payload %s: %v", w1.Payload, err)
	}
	if w1.URISpec != "{scheme}://{address}:{port}" || w1.URI(nil) != "https://10.0.0.1:8080" {
		t.Errorf("w1 uri spec %q gives %q", w1.URISpec, w1.URI(nil))
	}
	if w2.SSLPort != 0 || w2.Payload != nil || w2.URI(nil) != "http://10.0.0.2:8081" {
		t.Errorf("w2 = %+v", w2)
	}

	// A Go provider follows Curator's registrations.
	p, err := d.NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	ask(t, ctx, java, "update w2 9999", "updated")
	testkit.Eventually(t, time.Minute, "the update seen", func() bool {
		in := served(t, p)
		return len(in) == 2 && in[1].Port == 9999
	})
	ask(t, ctx, java, "unregister w1", "unregistered")
	testkit.Eventually(t, time.Minute, "the unregistration seen", func() bool {
		in := served(t, p)
		return len(in) == 1 && in[0].ID == "w2"
	})
}

func TestGoRegistersCuratorFinds(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, 2*time.Minute)
	d := newDiscovery(t, sess, "/services")
	r1, err := d.Register(ctx, Instance{
		Name: "web", ID: "g1", Address: "10.1.0.1", Port: 8080, SSLPort: 8443,
		Payload: json.RawMessage(`{"zone":"us"}`), URISpec: "{scheme}://{address}:{port}/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Register(ctx, Instance{Name: "web", ID: "g2", Address: "10.1.0.2", Port: 8081}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Register(ctx, Instance{Name: "db", Address: "10.1.0.3", Port: 5432}); err != nil {
		t.Fatal(err)
	}
	java := curator(t, ctx, sess.Config().Chroot, "/services")
	if got := ask(t, ctx, java, "names", "names"); got[0] != "names db,web" {
		t.Errorf("Curator's names: %q", got)
	}
	got := ask(t, ctx, java, "query web", "end")
	time1 := r1.Instance().RegistrationTimeUTC
	want := []string{
		"instance id=g1 name=web address=10.1.0.1 port=8080 ssl=8443 type=DYNAMIC enabled=true time=" +
			itoa(time1) + " payload={zone=us} uri=http://10.1.0.1:8080/x",
	}
	if len(got) != 3 || got[0] != want[0] || !strings.HasPrefix(got[1], "instance id=g2 name=web address=10.1.0.2 port=8081 ssl=null type=DYNAMIC enabled=true") ||
		!strings.HasSuffix(got[1], "payload=null uri=") {
		t.Errorf("Curator's query:\n got %q\nwant %q and g2", got, want)
	}
	// Curator's provider hands out Go's instances in turn.
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		l := ask(t, ctx, java, "provider web", "provider")
		seen[strings.TrimPrefix(l[0], "provider ")] = true
	}
	if !seen["g1"] || !seen["g2"] || len(seen) != 2 {
		t.Errorf("Curator's provider handed out %v", seen)
	}
	// An update and an unregistration are seen by Curator.
	in := r1.Instance()
	in.Port = 7000
	if err := r1.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	if got := ask(t, ctx, java, "query web", "end"); !strings.Contains(got[0], "port=7000") {
		t.Errorf("after update, Curator sees %q", got[0])
	}
	if err := r1.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ask(t, ctx, java, "query web", "end"); len(got) != 2 || !strings.Contains(got[0], "id=g2") {
		t.Errorf("after unregister, Curator sees %q", got)
	}
	// A disabled instance is read as such.
	if _, err := d.Register(ctx, Instance{Name: "off", ID: "x", Address: "h", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	if got := ask(t, ctx, java, "query off", "end"); !strings.Contains(got[0], "enabled=false") {
		t.Errorf("Curator sees a disabled instance as %q", got[0])
	}
	// A DynamicSequential instance, whose node has a protected name
	// (_c_<uuid>-<id><sequence>), is found by its JSON, which names it.
	seq, err := d.Register(ctx, Instance{Name: "seq", ID: "s1", Address: "10.1.0.4", Port: 80, ServiceType: DynamicSequential})
	if err != nil {
		t.Fatal(err)
	}
	if got := ask(t, ctx, java, "query seq", "end"); len(got) != 2 || !strings.HasPrefix(got[0], "instance id=s1 name=seq address=10.1.0.4 port=80 ") ||
		!strings.Contains(got[0], "type=DYNAMIC_SEQUENTIAL") {
		t.Errorf("Curator sees a sequential instance (node %s) as %q", seq.Path(), got)
	}
	if l := ask(t, ctx, java, "provider seq", "provider"); l[0] != "provider s1" {
		t.Errorf("Curator's provider handed out %q", l[0])
	}
}

// A Go cache follows what Curator's ServiceDiscovery registers, updates
// and unregisters, as events.
func TestCuratorRegistersGoCacheSees(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, 2*time.Minute)
	java := curator(t, ctx, sess.Config().Chroot, "/services")
	ask(t, ctx, java, "register web w1 10.0.0.1 8080 - zone=eu", "registered")
	c, err := newDiscovery(t, sess, "/services").NewCache(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if ev := next(t, ctx, c); ev.Type != Added || ev.Instance.ID != "w1" || ev.Instance.Port != 8080 || zone(ev.Instance) != "eu" {
		t.Fatalf("loaded %v %+v", ev, ev.Instance)
	}
	if ev := next(t, ctx, c); ev.Type != Initialized {
		t.Fatalf("then %v", ev)
	}
	ask(t, ctx, java, "register web w2 10.0.0.2 8081 - -", "registered")
	if ev := next(t, ctx, c); ev.Type != Added || ev.Instance.ID != "w2" || ev.Instance.Address != "10.0.0.2" {
		t.Fatalf("after Curator registered w2: %v %+v", ev, ev.Instance)
	}
	ask(t, ctx, java, "update w2 9999", "updated")
	if ev := next(t, ctx, c); ev.Type != Updated || ev.Instance.ID != "w2" || ev.Instance.Port != 9999 {
		t.Fatalf("after Curator updated w2: %v %+v", ev, ev.Instance)
	}
	ask(t, ctx, java, "unregister w1", "unregistered")
	if ev := next(t, ctx, c); ev.Type != Removed || ev.Instance.ID != "w1" {
		t.Fatalf("after Curator unregistered w1: %v %+v", ev, ev.Instance)
	}
}

// awaitLine reads the peer's lines until one equals want; it fails the
// test on a line equal to never.
func awaitLine(t *testing.T, ctx context.Context, p *interop.Proc, want, never string) {
	t.Helper()
	for {
		l, err := p.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v\n%s", want, err, p.Stderr())
		}
		switch l {
		case want:
			return
		case never:
			t.Fatalf("%q before %q", l, want)
		}
	}
}

// Curator's ServiceCache follows a Go registration kept across Sessions:
// its update, its loss with an expired Session, its registration again
// with the updated data (never the original), and its end.
func TestGoRegistersCuratorCacheSees(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, 2*time.Minute)
	java := curator(t, ctx, sess.Config().Chroot, "/services")
	ask(t, ctx, java, "cache web", "cache web")
	r, err := RegisterConfig(ctx, supervisedConfig(t), "/services", Instance{Name: "web", ID: "g1", Address: "10.1.0.1", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	awaitLine(t, ctx, java, "cache web g1:1", "")
	in := r.Instance()
	in.Port = 2
	if err := r.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	awaitLine(t, ctx, java, "cache web g1:2", "")
	expire(t, ctx, r)
	awaitLine(t, ctx, java, "cache web -", "cache web g1:1")
	awaitLine(t, ctx, java, "cache web g1:2", "cache web g1:1")
	if err := r.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	awaitLine(t, ctx, java, "cache web -", "cache web g1:1")
}
