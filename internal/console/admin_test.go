package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/console"
	"github.com/zkcoord/zkcoord/internal/testkit"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/rebalance"
)

// post sends an admin request as the page does.
func post(t *testing.T, srv string, path string, form url.Values) int {
	t.Helper()
	return postWith(t, srv, path, form, true)
}

func postWith(t *testing.T, srv string, path string, form url.Values, header bool) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv+path, nil)
	req.URL.RawQuery = form.Encode()
	if header {
		req.Header.Set(console.AdminHeader, "1")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode
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
	if code := post(t, srv.URL, "/api/admin/break-lock", url.Values{"path": {"/ro/lock"}, "node": {node}, "confirm": {node}}); code != http.StatusForbidden {
		t.Fatalf("break-lock answered %d, want 403", code)
	}
	select {
	case <-lease.Done():
		t.Fatal("the lease ended")
	default:
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

	srv := serve(t, connect(t), console.Options{Admin: true})
	v := waitView(t, srv, "/adm/lock", func(v *console.View) error {
		if len(v.Lock.Waiters) != 1 {
			return fmt.Errorf("waiters %+v", v.Lock.Waiters)
		}
		return nil
	})
	node := v.Lock.Holders[0].Node
	form := url.Values{"path": {"/adm/lock"}, "node": {node}, "confirm": {"yes"}}
	if code := post(t, srv.URL, "/api/admin/break-lock", form); code != http.StatusBadRequest {
		t.Fatalf("unconfirmed break-lock answered %d, want 400", code)
	}
	form.Set("confirm", node)
	if code := postWith(t, srv.URL, "/api/admin/break-lock", form, false); code != http.StatusForbidden {
		t.Fatalf("break-lock without %s answered %d, want 403", console.AdminHeader, code)
	}
	if code := post(t, srv.URL, "/api/admin/break-lock", form); code != http.StatusOK {
		t.Fatalf("break-lock answered %d", code)
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
	if code := post(t, srv.URL, "/api/admin/resource", add); code != http.StatusBadRequest {
		t.Fatalf("unconfirmed add answered %d, want 400", code)
	}
	add.Set("confirm", "r2")
	if code := post(t, srv.URL, "/api/admin/resource", add); code != http.StatusOK {
		t.Fatalf("add answered %d", code)
	}
	rm := url.Values{"group": {"/adm/rebalance/g"}, "op": {"remove"}, "id": {"r0"}, "confirm": {"r0"}}
	if code := post(t, srv.URL, "/api/admin/resource", rm); code != http.StatusOK {
		t.Fatalf("remove answered %d", code)
	}
	res, err := rebalance.ListResources(ctx, connect(t), "/adm/rebalance", "g")
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
