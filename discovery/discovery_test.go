package discovery

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

const wait = time.Minute

func register(t *testing.T, d *Discovery, in Instance) *Registration {
	t.Helper()
	r, err := d.Register(testkit.Ctx(t, wait), in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(in []Instance) []string {
	var out []string
	for _, x := range in {
		out = append(out, x.ID)
	}
	return out
}

func TestRegisterQueryUpdateUnregister(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	if names, err := d.Names(ctx); err != nil || names != nil {
		t.Fatalf("Names before any registration = %q, %v", names, err)
	}
	r := register(t, d, Instance{Name: "web", Address: "h1", Port: 80})
	in := r.Instance()
	if len(in.ID) != 36 || in.RegistrationTimeUTC == 0 || in.ServiceType != Dynamic {
		t.Errorf("defaults not filled in: %+v", in)
	}
	_, st, err := sess.Exists(ctx, r.Path())
	if err != nil || st.EphemeralOwner != sess.ID() {
		t.Fatalf("node %s: owner %x, %v", r.Path(), st.EphemeralOwner, err)
	}
	got, err := d.Instance(ctx, "web", in.ID)
	if err != nil || got.Address != "h1" || got.Port != 80 {
		t.Fatalf("Instance = %+v, %v", got, err)
	}
	in.Port = 81
	in.Disabled = true
	if err := r.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Instance(ctx, "web", in.ID); got.Port != 81 || !got.Disabled || got.RegistrationTimeUTC != in.RegistrationTimeUTC {
		t.Errorf("after Update: %+v", got)
	}
	bad := in
	bad.ID = "other"
	if err := r.Update(ctx, bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("Update changing the id: %v", err)
	}
	if err := r.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Unregister(ctx); err != nil {
		t.Errorf("second Unregister: %v", err)
	}
	if _, err := d.Instance(ctx, "web", in.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Instance after Unregister: %v", err)
	}
	if err := r.Update(ctx, in); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update after Unregister: %v", err)
	}
}

func TestInvalidArguments(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	if _, err := New(nil, "/svc"); !errors.Is(err, zkcoord.ErrNilSession) {
		t.Errorf("New(nil): %v", err)
	}
	if _, err := New(sess, "svc"); !errors.Is(err, ErrInvalid) || !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Errorf("New(svc): %v", err)
	}
	d := newDiscovery(t, sess, "/svc")
	for _, in := range []Instance{
		{Name: "", Address: "h"}, {Name: "a/b", Address: "h"}, {Name: "web", ID: "x/y", Address: "h"},
		{Name: "web", ServiceType: "ODD", Address: "h"},
		{Name: "web", ID: "nowhere"}, // no address and no port: it could never be served
	} {
		if _, err := d.Register(ctx, in); !errors.Is(err, ErrInvalid) {
			t.Errorf("Register(%+v): %v", in, err)
		}
	}
	if _, err := d.Instances(ctx, ".."); !errors.Is(err, ErrInvalid) {
		t.Errorf("Instances(..): %v", err)
	}
}

// A Dynamic instance goes with its Session; Reregister puts it back through
// a new one, and a Static one stays.
func TestReregisterOnANewSession(t *testing.T) {
	first := connect(t)
	ctx := testkit.Ctx(t, wait)
	d1 := newDiscovery(t, first, "/svc")
	r := register(t, d1, Instance{Name: "web", ID: "w", Address: "h"})
	register(t, d1, Instance{Name: "web", ID: "s", Address: "h", ServiceType: Static})
	first.Close(ctx)

	second := connect(t)
	d2 := newDiscovery(t, second, "/svc")
	got, err := d2.Instances(ctx, "web")
	if err != nil || !slices.Equal(ids(got), []string{"s"}) {
		t.Fatalf("after the Session ended: %v, %v", ids(got), err)
	}
	if err := r.Reregister(ctx, d2); err != nil {
		t.Fatal(err)
	}
	got, _ = d2.Instances(ctx, "web")
	if !slices.Equal(ids(got), []string{"s", "w"}) || got[1].RegistrationTimeUTC != r.Instance().RegistrationTimeUTC {
		t.Errorf("after Reregister: %+v", got)
	}
	if _, st, _ := second.Exists(ctx, r.Path()); st == nil || st.EphemeralOwner != second.ID() {
		t.Errorf("the node is not the new Session's")
	}
	// Registering over a node of another Session replaces it (Curator does
	// the same); registering again on the same Session rewrites its own.
	third := connect(t)
	d3 := newDiscovery(t, third, "/svc")
	register(t, d3, Instance{Name: "web", ID: "w", Address: "h3"})
	register(t, d3, Instance{Name: "web", ID: "w", Address: "h4"})
	if got, _ := d3.Instance(ctx, "web", "w"); got.Address != "h4" {
		t.Errorf("re-registered instance: %+v", got)
	}
	if _, st, _ := third.Exists(ctx, r.Path()); st == nil || st.EphemeralOwner != third.ID() {
		t.Errorf("the node is not the third Session's")
	}
}

func TestCorruptInstancesAreSkipped(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	register(t, d, Instance{Name: "web", ID: "ok", Address: "h"})
	if _, err := sess.Create(ctx, "/svc/web/bad", []byte{0xff, '{', 0}, 0); err != nil {
		t.Fatal(err)
	}
	got, err := d.Instances(ctx, "web")
	if err != nil || !slices.Equal(ids(got), []string{"ok"}) {
		t.Errorf("Instances = %v, %v", ids(got), err)
	}
	if _, err := d.Instance(ctx, "web", "bad"); !errors.Is(err, zkcoord.ErrBadData) {
		t.Errorf("Instance(bad): %v", err)
	}
	p, err := d.NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if got := ids(served(t, p)); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("provider instances %v", got)
	}
}

func TestProviderFollowsAndPicks(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	for _, id := range []string{"a", "b", "c"} {
		register(t, d, Instance{Name: "web", ID: id, Address: id})
	}
	rr, err := d.NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close(ctx)
	var order []string
	for i := 0; i < 6; i++ {
		in, err := rr.Get()
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, in.ID)
	}
	if !slices.Equal(order, []string{"a", "b", "c", "a", "b", "c"}) {
		t.Errorf("round robin gave %v", order)
	}

	// The options of New are every provider's defaults.
	ds := newDiscovery(t, sess, "/svc", WithStrategy(func() Strategy { return Sticky(Random()) }))
	sticky, err := ds.NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer sticky.Close(ctx)
	first, _ := sticky.Get()
	for i := 0; i < 5; i++ {
		if in, _ := sticky.Get(); in.ID != first.ID {
			t.Fatalf("sticky moved from %s to %s", first.ID, in.ID)
		}
	}
	// Its instance going away moves it on; so does marking it down.
	if err := recipe.EnsureDeleted(ctx, sess, zkcoord.Join("/svc/web", first.ID)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, wait, "the provider sees the removal", func() bool { return len(served(t, sticky)) == 2 })
	second, _ := sticky.Get()
	if second.ID == first.ID {
		t.Fatalf("sticky kept a removed instance")
	}
	sticky.MarkDown(second.ID, time.Hour)
	if in, _ := sticky.Get(); in.ID == second.ID || in.ID == first.ID {
		t.Errorf("sticky handed out %s, which is down or gone", in.ID)
	}

	random, err := d.NewProvider(ctx, "web", WithStrategy(Random))
	if err != nil {
		t.Fatal(err)
	}
	defer random.Close(ctx)
	for i := 0; i < 20; i++ {
		if in, _ := random.Get(); in.ID == first.ID {
			t.Fatalf("random handed out the removed %s", in.ID)
		}
	}
	register(t, d, Instance{Name: "web", ID: "d", Address: "d"})
	testkit.Eventually(t, wait, "the provider sees the new instance", func() bool { return len(served(t, random)) == 3 })
}

func TestMarkDownExpires(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	register(t, d, Instance{Name: "web", ID: "a", Address: "h"})
	register(t, d, Instance{Name: "web", ID: "b", Address: "h", Disabled: true})
	clk := &clock{now: time.Now()}
	p, err := d.NewProvider(ctx, "web", WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	p.MarkDown("a", time.Minute)
	if _, err := p.Get(); !errors.Is(err, ErrNoInstance) {
		t.Errorf("Get with every instance down or disabled: %v", err)
	}
	clk.advance(time.Minute)
	if in, err := p.Get(); err != nil || in.ID != "a" {
		t.Errorf("Get after the down time: %v, %v", in.ID, err)
	}
}

func TestProviderEndsWithTheSession(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	p, err := d.NewProvider(ctx, "none")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(); !errors.Is(err, ErrNoInstance) {
		t.Errorf("Get of a service without instances: %v", err)
	}
	sess.Close(ctx)
	<-p.Done()
	if err := p.Close(ctx); err != nil {
		t.Error(err)
	}
}

func TestInstanceJSON(t *testing.T) {
	in := Instance{Name: "n", ID: "i", Port: 1, URISpec: "{scheme}://x{"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"n","id":"i","address":null,"port":1,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://x{","variable":false}]}}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
	var back Instance
	if err := json.Unmarshal(b, &back); err != nil || back.URISpec != in.URISpec || back.ServiceType != Dynamic {
		t.Errorf("back: %+v, %v", back, err)
	}
}
