package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/rebalance"
)

// adminRequest is an admin request: its form, and the headers that a page
// sends (Host and Origin left empty are the server's own).
type adminRequest struct {
	form         url.Values
	key          string
	host, origin string
}

// post sends an admin request as the page does, with the console's key.
func post(t *testing.T, srv string, path string, form url.Values, key string) int {
	t.Helper()
	code, _ := send(t, srv, path, adminRequest{form: form, key: key})
	return code
}

// send sends an admin request and returns the status and the result shown.
func send(t *testing.T, srv string, path string, a adminRequest) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv+path, nil)
	req.URL.RawQuery = a.form.Encode()
	if a.key != "" {
		req.Header.Set(console.AdminHeader, a.key)
	}
	if a.host != "" {
		req.Host = a.host
	}
	if a.origin != "" {
		req.Header.Set("Origin", a.origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	var body struct{ Result string }
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.Result
}

// TestReadOnlyByDefault: without Options.Admin nothing is changed.
func TestReadOnlyByDefault(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	m, _ := lock.NewMutex(sess, "/ro/lock")
	lease, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, connect(t), console.Options{})
	v := waitView(t, srv, "/ro/lock", func(*console.View) error { return nil })
	node := v.Lock.Holders[0].Node
	if code := post(t, srv.URL, "/api/admin/break-lock", url.Values{"path": {"/ro/lock"}, "node": {node}, "confirm": {node}}, "1"); code != http.StatusForbidden {
		t.Fatalf("break-lock answered %d, want 403", code)
	}
	select {
	case <-lease.Done():
		t.Fatal("the lease ended")
	default:
	}
	// A page whose name was rebound to the console's address reads nothing.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/state", nil)
	req.Host = "evil.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("the state was served to the host evil.example: %d", res.StatusCode)
	}
}

// TestAdminActions breaks a lock (its waiter gets it) and adds and removes
// a resource, each only when confirmed.
func TestAdminActions(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	s1, s2 := connect(t), connect(t)
	m1, _ := lock.NewMutex(s1, "/adm/lock")
	m2, _ := lock.NewMutex(s2, "/adm/lock")
	lease, err := m1.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := m2.Lock(ctx); got <- err }()
	startWorkers(t, "/adm/rebalance", "g", 2, "r0", "r1")

	srv, c := serveConsole(t, connect(t), console.Options{Admin: true})
	key := c.AdminKey()
	v := waitView(t, srv, "/adm/lock", func(v *console.View) error {
		if len(v.Lock.Waiters) != 1 {
			return fmt.Errorf("waiters %+v", v.Lock.Waiters)
		}
		return nil
	})
	node := v.Lock.Holders[0].Node
	form := url.Values{"path": {"/adm/lock"}, "node": {node}, "confirm": {"yes"}}
	if code := post(t, srv.URL, "/api/admin/break-lock", form, key); code != http.StatusBadRequest {
		t.Fatalf("unconfirmed break-lock answered %d, want 400", code)
	}
	form.Set("confirm", node)
	refused := map[string]adminRequest{
		"no key":                    {form: form},
		"the old constant header":   {form: form, key: "1"},
		"a wrong key":               {form: form, key: key[1:] + "0"},
		"a rebound host name":       {form: form, key: key, host: "evil.example"},
		"a foreign origin":          {form: form, key: key, origin: "http://evil.example"},
		"an opaque origin":          {form: form, key: key, origin: "null"},
		"a rebound name on the key": {form: form, key: key, host: "evil.example", origin: "http://evil.example"},
	}
	for name, a := range refused {
		if code, msg := send(t, srv.URL, "/api/admin/break-lock", a); code != http.StatusForbidden {
			t.Fatalf("break-lock with %s answered %d (%s), want 403", name, code, msg)
		}
	}
	select {
	case <-lease.Done():
		t.Fatal("a refused request broke the lock")
	default:
	}
	code, msg := send(t, srv.URL, "/api/admin/break-lock", adminRequest{form: form, key: key, origin: srv.URL})
	if code != http.StatusOK {
		t.Fatalf("break-lock answered %d (%s)", code, msg)
	}
	if !strings.Contains(msg, "may go on running until its ZooKeeper session expires") {
		t.Fatalf("break-lock said %q, not that the holder may still run", msg)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter did not get the lock: %v", err)
	}
	<-lease.Done() // the broken holder learns it lost the lock

	waitView(t, srv, "/adm/rebalance/g", func(v *console.View) error {
		if v.Group.Resources != 2 {
			return fmt.Errorf("%d resources", v.Group.Resources)
		}
		return nil
	})
	add := url.Values{"group": {"/adm/rebalance/g"}, "op": {"add"}, "id": {"r2"}}
	if code := post(t, srv.URL, "/api/admin/resource", add, key); code != http.StatusBadRequest {
		t.Fatalf("unconfirmed add answered %d, want 400", code)
	}
	add.Set("confirm", "r2")
	if code := post(t, srv.URL, "/api/admin/resource", add, key); code != http.StatusOK {
		t.Fatalf("add answered %d", code)
	}
	rm := url.Values{"group": {"/adm/rebalance/g"}, "op": {"remove"}, "id": {"r0"}, "confirm": {"r0"}}
	if code := post(t, srv.URL, "/api/admin/resource", rm, key); code != http.StatusOK {
		t.Fatalf("remove answered %d", code)
	}
	res, err := rebalance.ListResources(ctx, connect(t), zkcoord.Join("/adm/rebalance", "g"))
	if err != nil || !slices.Equal(res, []string{"r1", "r2"}) {
		t.Fatalf("resources %v (%v), want [r1 r2]", res, err)
	}
	waitView(t, srv, "/adm/rebalance/g", func(v *console.View) error {
		if v.Group.Resources != 2 || v.Group.Rebalancing || v.Group.Barriers["r2"].Client == "" {
			return fmt.Errorf("group %+v", v.Group)
		}
		return nil
	})
}
