package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// demoGroup writes the layout of a rebalancer group the size of the
// demo's (3 members, 12 resources, each barrier held by its owner) at
// base, as its clients would, on sess: no other Session, and so no other
// watch, is involved. It returns the members' ids and the allocation.
func demoGroup(t *testing.T, ctx context.Context, sess *zkcoord.Session, base string) ([]string, alloc.Assignment) {
	t.Helper()
	for _, p := range []string{"clients", "resources", "barriers"} {
		if err := sess.EnsurePath(ctx, zkcoord.Join(base, p)); err != nil {
			t.Fatal(err)
		}
	}
	term, _ := json.Marshal(map[string]string{"coordinator": "c_0000000000"})
	if _, err := sess.Create(ctx, zkcoord.Join(base, "term"), term, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	var members, resources []string
	for i := range 3 {
		data, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("worker-%d", i), "mode": "incremental"})
		p, err := sess.Create(ctx, zkcoord.Join(base, "clients", "_c_"+uuid.NewString()+"-c_"), data, zkcoord.FlagEphemeralSequential)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, zkcoord.StripProtected(zkcoord.Base(p)))
	}
	for i := 1; i <= 12; i++ {
		r := fmt.Sprintf("shard-%02d", i)
		resources = append(resources, r)
		if _, err := sess.Create(ctx, zkcoord.Join(base, "resources", r), nil, zkcoord.FlagPersistent); err != nil {
			t.Fatal(err)
		}
	}
	a := alloc.Balanced(members, resources)
	data, err := alloc.Encode(alloc.Record{Term: 1, Generation: 1, Assignment: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Set(ctx, zkcoord.Join(base, "resources"), data, -1); err != nil {
		t.Fatal(err)
	}
	for c, rs := range a {
		for _, r := range rs {
			data, _ := json.Marshal(map[string]any{"client": c, "generation": 1})
			if _, err := sess.Create(ctx, zkcoord.Join(base, "barriers", r), data, zkcoord.FlagEphemeral); err != nil {
				t.Fatal(err)
			}
		}
	}
	return members, a
}

// TestOneWatchPerRoot: the console follows each of its roots on one
// persistent recursive watch (the server, ZooKeeper 3.8, has them), not on
// a watch per node read, and changes add none: the server holds for the
// console's Session exactly the watches that one recursive watch per root
// costs it, set by a Session of the test's own.
func TestOneWatchPerRoot(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	const base = "/demo/rebalance/orders"
	members, a := demoGroup(t, ctx, sess, base)
	cnt, _ := counter.New(sess, "/elsewhere/count")
	if _, err := cnt.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	nodes, err := sess.CountDescendants(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	srv0 := cluster.Server(0)
	watches := func() int {
		t.Helper()
		n, err := srv0.WatchCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// watched lists the paths of s's data watches, where wchc lists a
	// recursive watch (it lists no child watch: watches counts those).
	watched := func(s *zkcoord.Session) []string {
		t.Helper()
		by, err := srv0.Wchc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(slices.Values(by[s.ID()]))
	}
	// end closes s and waits until the server holds before watches again.
	end := func(s *zkcoord.Session, before int) {
		t.Helper()
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, 30*time.Second, "the watches of a closed session dropped", func() error {
			if n := watches(); n != before {
				return fmt.Errorf("%d watches, %d before", n, before)
			}
			return nil
		})
	}
	settled := func(srv *httptest.Server, gen int64) {
		t.Helper()
		waitView(t, srv, base, func(v *console.View) error {
			if g := v.Group; len(g.Members) != len(members) || g.Generation != gen || g.Rebalancing {
				return fmt.Errorf("group %+v", g)
			}
			return nil
		})
	}

	for _, tc := range []struct {
		opts  console.Options
		roots []string
	}{
		{console.Options{}, []string{"/"}},
		{console.Options{Paths: []string{"/demo", "/demo/rebalance", "counter:/elsewhere/count"}}, []string{"/demo", "/elsewhere/count"}},
	} {
		before := watches()
		ref := connect(t)
		var wantPaths []string
		for _, r := range tc.roots {
			if _, err := ref.AddWatch(ctx, r, true); err != nil {
				t.Fatal(err)
			}
			wantPaths = append(wantPaths, strings.TrimSuffix(testkit.Chroot(t)+r, "/"))
		}
		want := watches() - before
		end(ref, before)

		follower := connect(t)
		srv, c := serveConsole(t, follower, tc.opts)
		settled(srv, 1)
		waitView(t, srv, "/elsewhere/count", func(v *console.View) error { return wantCount(v, 1) })
		check := func(when string) {
			t.Helper()
			got, paths := watches()-before, watched(follower)
			t.Logf("console on %q (%d nodes), %s: %d watches on the server (%d for a recursive watch on each root), on %q",
				tc.opts.Paths, nodes, when, got, want, paths)
			if got != want || !slices.Equal(paths, wantPaths) {
				t.Fatalf("the console holds %d watches, on %q; one recursive watch on each of %q is %d", got, paths, wantPaths, want)
			}
		}
		check("loaded")

		// Changes: the counter moves; a resource moves to another member,
		// its barrier with it.
		if _, err := cnt.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		waitView(t, srv, "/elsewhere/count", func(v *console.View) error { return wantCount(v, 2) })
		if _, err := cnt.Add(ctx, -1); err != nil {
			t.Fatal(err)
		}
		from, to := members[0], members[1]
		r := a[from][0]
		next := a.Clone()
		next[from] = slices.Clone(a[from][1:])
		next[to] = append(slices.Clone(a[to]), r)
		data, err := alloc.Encode(alloc.Record{Term: 1, Generation: 2, Assignment: next})
		if err != nil {
			t.Fatal(err)
		}
		barrier := zkcoord.Join(base, "barriers", r)
		held, _ := json.Marshal(map[string]any{"client": to, "generation": 2})
		if _, err := sess.Multi(ctx, zkcoord.SetOp(zkcoord.Join(base, "resources"), data, -1),
			zkcoord.DeleteOp(barrier, -1), zkcoord.CreateOp(barrier, held, zkcoord.FlagEphemeral)); err != nil {
			t.Fatal(err)
		}
		settled(srv, 2)
		check("after changes")

		// Back as it was, for the next case.
		data, _ = alloc.Encode(alloc.Record{Term: 1, Generation: 1, Assignment: a})
		held, _ = json.Marshal(map[string]any{"client": from, "generation": 1})
		if _, err := sess.Multi(ctx, zkcoord.SetOp(zkcoord.Join(base, "resources"), data, -1),
			zkcoord.DeleteOp(barrier, -1), zkcoord.CreateOp(barrier, held, zkcoord.FlagEphemeral)); err != nil {
			t.Fatal(err)
		}
		settled(srv, 1)
		// The server keeps a recursive watch until the Session's
		// connection ends (before ZooKeeper 3.9 it cannot remove one
		// alone): end both.
		c.Close()
		end(follower, before)
	}
}
