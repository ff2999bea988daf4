package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/zktest"
)

// owners records who runs each resource of a rebalance group, and any
// moment when two clients ran one at once.
type owners struct {
	mu       sync.Mutex
	by       map[string]string
	doubled  []string
	starts   int
	releases int
}

func (o *owners) handler(client string) rebalance.Handler {
	return rebalance.Handler{
		Assigned: func(_ context.Context, a rebalance.Assignment) error {
			o.mu.Lock()
			defer o.mu.Unlock()
			if prev, ok := o.by[a.Resource]; ok {
				o.doubled = append(o.doubled, fmt.Sprintf("%s started by %s while %s runs it", a.Resource, client, prev))
			}
			o.by[a.Resource] = client
			o.starts++
			return nil
		},
		Unassigned: func(a rebalance.Assignment, _ error) error {
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.by[a.Resource] == client {
				delete(o.by, a.Resource)
			}
			o.releases++
			return nil
		},
	}
}

// Grown from three servers to five (a participant and an observer join)
// and shrunk by the one every Session is connected to and by the observer,
// the ensemble keeps a lock held, a leader leading and a
// group's assignment where they were: the Sessions follow the membership
// and move to a member within their session, so nothing is lost or doubled.
func TestRecipesOutliveReconfiguration(t *testing.T) {
	c := zktest.Start(t, zktest.WithServers(3), zktest.WithReconfig())
	ctx := testkit.Ctx(t, 90*time.Second)
	seed := c.Servers()[:1] // every Session starts on server 0
	sessions := make([]*zkcoord.Session, 5)
	for i := range sessions {
		sessions[i] = testkit.Connect(t, seed, func(cfg *zkcoord.Config) { cfg.Chroot = testkit.Chroot(t) })
	}
	holder, contender, leader, follower, member := sessions[0], sessions[1], sessions[2], sessions[3], sessions[4]

	// (a) a lock held
	m, err := lock.NewMutex(holder, "/lock")
	if err != nil {
		t.Fatal(err)
	}
	lease, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := lock.NewMutex(contender, "/lock")
	if err != nil {
		t.Fatal(err)
	}
	// (b) a leader leading, a candidate following
	el, err := election.New(leader, "/election")
	if err != nil {
		t.Fatal(err)
	}
	lead, err := el.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var standing atomic.Bool // the other candidate stands by behind the leader
	stood := make(chan struct{}, 1)
	events, stopEvents := fifo.Relay(16, func(ev election.Event) {
		switch ev.Type {
		case election.EventFollowing:
			standing.Store(true)
			select {
			case stood <- struct{}{}:
			default:
			}
		case election.EventElected, election.EventLost, election.EventResigned, election.EventFailed:
			standing.Store(false)
		}
	})
	t.Cleanup(stopEvents)
	fel, err := election.New(follower, "/election", election.WithEvents(events))
	if err != nil {
		t.Fatal(err)
	}
	go fel.Campaign(ctx) // stands by until the test ends
	select {
	case <-stood:
	case <-ctx.Done():
		t.Fatal("the other candidate never stood by")
	}
	// (c) a group of two sharing four resources
	const root, group = "/rebalance", "g"
	for i := range 4 {
		if err := rebalance.AddResource(ctx, member, zkcoord.Join(root, group), fmt.Sprintf("r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	own := &owners{by: map[string]string{}}
	for i, s := range []*zkcoord.Session{member, follower} {
		rc, err := rebalance.Start(ctx, s, zkcoord.Join(root, group), own.handler(fmt.Sprint("client", i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Stop(context.Background()) })
	}
	balanced := func() bool {
		own.mu.Lock()
		defer own.mu.Unlock()
		counts := map[string]int{}
		for _, cl := range own.by {
			counts[cl]++
		}
		return len(own.by) == 4 && counts["client0"] == 2 && counts["client1"] == 2
	}
	testkit.Eventually(t, 30*time.Second, "the group to share the four resources", balanced)
	// The first member may have started all four before the second
	// joined: what happened until now is the baseline.
	own.mu.Lock()
	startsBefore, releasesBefore := own.starts, own.releases
	own.mu.Unlock()

	following := func(what string, want []string) {
		t.Helper()
		for i, s := range sessions {
			testkit.Eventually(t, 30*time.Second, fmt.Sprintf("session %d to follow %s", i, what), func() bool {
				got := s.Servers()
				return sameSet(got, want) && slices.Contains(want, s.Server())
			})
		}
	}
	following("the three members", c.Servers())

	if _, err := c.AddServer(ctx, false); err != nil {
		t.Fatal(err)
	}
	observer, err := c.AddServer(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	following("the ensemble grown by a participant and an observer", c.Servers())
	if err := c.RemoveServer(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveServer(ctx, observer.Index()); err != nil {
		t.Fatal(err)
	}
	following("the shrunk ensemble", c.Servers()[1:4])
	for i, s := range sessions {
		if _, _, err := s.Exists(ctx, "/"); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if err := s.Err(); err != nil {
			t.Fatalf("session %d ended: %v", i, err)
		}
	}

	select {
	case <-lease.Done():
		t.Fatalf("the lock was lost: %v", lease.Err())
	default:
	}
	if _, err := other.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("a second client's TryLock: %v, want ErrLocked", err)
	}
	select {
	case <-lead.Done():
		t.Fatalf("the leadership was lost: %v", lead.Err())
	default:
	}
	if l, err := el.Leader(ctx); err != nil || l.ID != lead.ID() {
		t.Fatalf("leader %+v, %v; want %s", l, err, lead.ID())
	}
	if !standing.Load() {
		t.Fatal("the other candidate no longer stands by")
	}
	own.mu.Lock()
	defer own.mu.Unlock()
	if len(own.doubled) > 0 {
		t.Fatalf("resources doubled: %v", own.doubled)
	}
	if own.starts != startsBefore || own.releases != releasesBefore || len(own.by) != 4 {
		t.Fatalf("the assignment moved: %d starts (%d before), %d releases (%d before), owners %v", own.starts, startsBefore, own.releases, releasesBefore, own.by)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
