package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func ids(ms []Member) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// until reads snapshots until one has exactly the given ids.
func until(t *testing.T, ctx context.Context, w *Watcher, want ...string) []Member {
	t.Helper()
	var last []Member
	for {
		select {
		case snap, ok := <-w.Changes():
			if !ok {
				t.Fatalf("watch ended (%v) before members %v; last %v", w.Err(), want, ids(last))
			}
			last = snap
			if slices.Equal(ids(snap), want) {
				return snap
			}
		case <-ctx.Done():
			t.Fatalf("never saw members %v; last %v", want, ids(last))
		}
	}
}

func TestJoinListLeave(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	admin := connect(t)
	// A persistent child is not a member.
	if err := admin.EnsurePath(ctx, "/svc/README"); err != nil {
		t.Fatal(err)
	}
	var ms []*Membership
	for _, id := range []string{"web-2", "web-1", "web-3"} {
		m, err := Join(ctx, connect(t), "/svc", id, []byte("addr of "+id))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	got, err := Members(ctx, admin, "/svc")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), []string{"web-1", "web-2", "web-3"}) {
		t.Fatalf("members = %v", ids(got))
	}
	for _, m := range got {
		if string(m.Data) != "addr of "+m.ID || m.Session == 0 || m.Joined == 0 || !zkcoord.IsProtected(zkcoord.Base(m.Path)) {
			t.Errorf("member %+v", m)
		}
	}

	if err := ms[0].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ms[0].Done():
	default:
		t.Fatal("Done not closed after Leave")
	}
	if !errors.Is(ms[0].Err(), ErrLeft) {
		t.Fatalf("Err after Leave = %v; want ErrLeft", ms[0].Err())
	}
	if err := ms[0].Leave(ctx); err != nil {
		t.Fatalf("second Leave: %v", err)
	}
	got, _ = Members(ctx, admin, "/svc")
	if !slices.Equal(ids(got), []string{"web-1", "web-3"}) {
		t.Fatalf("members after a leave = %v", ids(got))
	}
	if got, err := Members(ctx, admin, "/no/such/group"); err != nil || len(got) != 0 {
		t.Fatalf("members of a missing group = %v, %v", got, err)
	}
}

func TestJoinRejectsBadInput(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t, func(c *zkcoord.Config) { c.MaxDataSize = 64 })
	if _, err := Join(ctx, sess, "/g", "a/b", nil); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Errorf("Join with id a/b = %v; want ErrInvalidPath", err)
	}
	if _, err := Join(ctx, sess, "g", "a", nil); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Errorf("Join with a relative path = %v; want ErrInvalidPath", err)
	}
	if _, err := Join(ctx, sess, "/g", "a", make([]byte, 65)); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Errorf("Join with 65 bytes = %v; want ErrTooLarge", err)
	}
}

func TestWatchFollowsMembership(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	w, err := Watch(ctx, connect(t), "/team")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	until(t, ctx, w) // empty: the group does not exist yet
	a, err := Join(ctx, connect(t), "/team", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w, "a")
	b, err := Join(ctx, connect(t), "/team", "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w, "a", "b")
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w, "b")

	// Many changes while nobody reads: the reader ends on the newest.
	var more []*Membership
	for i := range 10 {
		m, err := Join(ctx, connect(t), "/team", fmt.Sprint("m", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		more = append(more, m)
	}
	for _, m := range more[:9] {
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	}
	until(t, ctx, w, "b", "m9")
	_ = b
}

func TestMemberNodeDeletedBySomeoneElse(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	m, err := Join(ctx, connect(t), "/g", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	mctx := m.Context()
	if err := mctx.Err(); err != nil {
		t.Fatalf("a member's Context ended: %v", err)
	}
	if err := connect(t).Delete(ctx, m.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after the member node was deleted")
	}
	if !errors.Is(m.Err(), ErrRemoved) {
		t.Fatalf("Err = %v; want ErrRemoved", m.Err())
	}
	select {
	case <-mctx.Done():
	case <-ctx.Done():
		t.Fatal("Context not cancelled after the member node was deleted")
	}
	if cause := context.Cause(mctx); !errors.Is(cause, ErrRemoved) {
		t.Fatalf("Context's cause %v; want ErrRemoved", cause)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatalf("Leave after removal: %v", err)
	}
}

// A member whose session the server expires leaves the group: its own Done
// closes with the expiry, and the others see it gone.
func TestMemberDroppedWhenSessionExpires(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	w, _ := Watch(ctx, connect(t), "/g")
	defer w.Stop()
	victim := connect(t)
	m, err := Join(ctx, victim, "/g", "victim", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Join(ctx, connect(t), "/g", "survivor", nil); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w, "survivor", "victim")
	if err := cluster.ExpireSession(ctx, victim.ID(), victim.Password()); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w, "survivor")
	select {
	case <-m.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after the session expired")
	}
	if !errors.Is(m.Err(), zkcoord.ErrSessionExpired) {
		t.Fatalf("Err = %v; want ErrSessionExpired", m.Err())
	}
}

// A member cut off from ZooKeeper learns that it is out of the group
// (session Lost) before the server expires the session, and the others
// then see it gone.
func TestMemberDroppedWhenSessionLost(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	w, _ := Watch(ctx, connect(t), "/g")
	defer w.Stop()
	proxy := cluster.NewProxy(t)
	victim := connect(t, func(c *zkcoord.Config) {
		c.Servers = proxy.Servers()
		c.SessionTimeout = 4 * time.Second
	})
	m, err := Join(ctx, victim, "/g", "victim", nil)
	if err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w, "victim")
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, w) // the server expired the session
	// By the time the others see it gone, the member knows.
	select {
	case <-m.Done():
	default:
		t.Fatal("the others saw the member gone while its Done was still open")
	}
	if !errors.Is(m.Err(), zkcoord.ErrSessionLost) {
		t.Fatalf("Err = %v; want ErrSessionLost", m.Err())
	}
}

// A membership whose own node can no longer be watched has ended, and says
// why: here the member's node is created without read permission (the
// Session's ACL), so the watch on it fails with NoAuth.
func TestMembershipEndsOnUnexpectedError(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	admin := connect(t)
	if err := admin.EnsurePath(ctx, "/noread"); err != nil {
		t.Fatal(err)
	}
	writeOnly := connect(t, func(c *zkcoord.Config) {
		c.ACL = zkcoord.WorldACL(zkcoord.PermAll &^ zkcoord.PermRead)
	})
	m, err := Join(ctx, writeOnly, "/noread", "member", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done did not close after the membership could not be watched")
	}
	if err := m.Err(); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("Err = %v, want one wrapping zkcoord.ErrNoAuth", err)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}
