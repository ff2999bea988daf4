package lockdelay_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
}

const d = time.Minute

func connect(t *testing.T) (*zkcoord.Session, context.Context) {
	t.Helper()
	// A chroot of each run's own: a directory left by an earlier run
	// would not be new.
	return testkit.Connect(t, cluster.Servers()), testkit.Ctx(t, 30*time.Second)
}

func isContender(name string) bool { return strings.HasPrefix(name, "n-") }

// contend arrives at dir, creates a contender and returns it with its
// tracker.
func contend(t *testing.T, ctx context.Context, sess *zkcoord.Session, dir string) (string, *lockdelay.Tracker) {
	t.Helper()
	tr, err := lockdelay.Arrive(ctx, sess, dir, d, isContender)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	node, err := sess.Create(ctx, dir+"/n-", nil, zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	return node, tr
}

func wait(t *testing.T, ctx context.Context, sess *zkcoord.Session, tr *lockdelay.Tracker, node string) time.Duration {
	t.Helper()
	w, err := tr.Wait(ctx, sess, node)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestArrivals: a contender first on arrival waits nothing at a new
// directory or after a marked release, and the delay after an unmarked
// delete or when a child vanished between its arrival and its check.
func TestArrivals(t *testing.T) {
	sess, ctx := connect(t)
	dir := "/lockdelay/" + t.Name()

	n, tr := contend(t, ctx, sess, dir)
	if w := wait(t, ctx, sess, tr, n); w != 0 {
		t.Fatalf("first contender of a new directory waits %v", w)
	}
	if err := lockdelay.Release(ctx, sess, n); err != nil {
		t.Fatal(err)
	}
	n, tr = contend(t, ctx, sess, dir)
	if w := wait(t, ctx, sess, tr, n); w != 0 {
		t.Fatalf("after a marked release: waits %v", w)
	}
	if err := sess.Delete(ctx, n, -1); err != nil {
		t.Fatal(err)
	}
	n, tr = contend(t, ctx, sess, dir)
	if w := wait(t, ctx, sess, tr, n); w != d {
		t.Fatalf("after an unmarked delete: waits %v, want %v", w, d)
	}
	if err := lockdelay.Release(ctx, sess, n); err != nil {
		t.Fatal(err)
	}
	// Free and clean on arrival, but a child comes and goes before the
	// contender checks.
	tr, err := lockdelay.Arrive(ctx, sess, dir, d, isContender)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sess.Create(ctx, dir+"/n-", nil, zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	n, err = sess.Create(ctx, dir+"/n-", nil, zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Delete(ctx, other, -1); err != nil {
		t.Fatal(err)
	}
	if w := wait(t, ctx, sess, tr, n); w != d {
		t.Fatalf("a child vanished since the arrival: waits %v, want %v", w, d)
	}
}

// TestPredecessor: a waiter whose predecessor released with the mark waits
// nothing; one whose predecessor was deleted without it waits the delay,
// also when another contender's release wrote the mark since; once
// passed, the delay is not waited again for the same predecessor.
func TestPredecessor(t *testing.T) {
	sess, ctx := connect(t)
	dir := "/lockdelay/" + t.Name()
	p, _ := contend(t, ctx, sess, dir)
	n, tr := contend(t, ctx, sess, dir)
	tr.Behind(p)
	if err := lockdelay.Release(ctx, sess, p); err != nil {
		t.Fatal(err)
	}
	if w := wait(t, ctx, sess, tr, n); w != 0 {
		t.Fatalf("after the predecessor's marked release: waits %v", w)
	}

	q, _ := contend(t, ctx, sess, dir)
	tr.Behind(q) // as if q sorted before n
	if err := sess.Delete(ctx, q, -1); err != nil {
		t.Fatal(err)
	}
	if w := wait(t, ctx, sess, tr, n); w != d {
		t.Fatalf("after the predecessor's unmarked delete: waits %v, want %v", w, d)
	}
	tr.Passed()
	if w := wait(t, ctx, sess, tr, n); w != 0 {
		t.Fatalf("after the delay passed: waits %v", w)
	}
	// Another contender's marked release does not vouch for the
	// predecessor, which was deleted without one.
	r, _ := contend(t, ctx, sess, dir)
	m, _ := contend(t, ctx, sess, dir)
	tr.Behind(r)
	if err := sess.Delete(ctx, r, -1); err != nil {
		t.Fatal(err)
	}
	if err := lockdelay.Release(ctx, sess, m); err != nil {
		t.Fatal(err)
	}
	if data, _, err := sess.Get(ctx, dir); err != nil || string(data) != zkcoord.Base(m) {
		t.Fatalf("mark %q (%v), want %q", data, err, zkcoord.Base(m))
	}
	if w := wait(t, ctx, sess, tr, n); w != d {
		t.Fatalf("predecessor deleted, another's release marked: waits %v, want %v", w, d)
	}
	var nilTracker *lockdelay.Tracker
	if w := wait(t, ctx, sess, nilTracker, n); w != 0 {
		t.Fatalf("no lock-delay: waits %v", w)
	}
}
