package election_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// TestLostBumpReplyTakesOfficeOnce: the reply to the transaction taking
// office is lost after the server applied it. The candidate settles it by
// the term node (after a sync): one version on with its own term data, so
// it leads in that term, without bumping the term a second time.
func TestLostBumpReplyTakesOfficeOnce(t *testing.T) {
	ctx := testCtx(t, 2*long)
	proxy := shared.NewProxy(t)
	// A session timeout that outlasts the cut and the slowed reconnection.
	sess := connect(t, proxy.Servers(), func(c *zkcoord.Config) { c.SessionTimeout = testkit.SessionTimeout })
	observer := connect(t, shared.Servers())
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("%s-%v", uniquePath(t), delay)
		e := newElection(t, sess, path, election.WithID("lost"))
		// The term node exists, so that the bump is the first change the
		// observer sees at it.
		if err := observer.EnsurePath(ctx, e.TermPath()); err != nil {
			t.Fatal(err)
		}
		// The Session noticing the cut is the sign that the bump no longer
		// knows its outcome.
		unknown := make(chan struct{}, 1)
		states := sess.Watch(ctx)
		go func() {
			for sc := range states {
				if sc.State == zkcoord.Suspended {
					select {
					case unknown <- struct{}{}:
					default:
					}
				}
			}
		}()
		var l *election.Leadership
		lost, err := testkit.LoseReply(t, ctx, proxy, observer, e.TermPath(), delay, unknown, func() (err error) {
			l, err = e.Campaign(ctx)
			return err
		})
		if err != nil {
			t.Fatalf("Campaign: %v", err)
		}
		_, st, err := observer.Get(ctx, e.TermPath())
		if err != nil {
			t.Fatal(err)
		}
		if l.Term() != 1 || st.Version != 1 {
			t.Fatalf("leads in term %d, term node at version %d; want both 1: one bump", l.Term(), st.Version)
		}
		if err := l.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		return lost
	})
}
