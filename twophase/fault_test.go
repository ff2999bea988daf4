package twophase

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A Join and a Vote whose replies are lost are found to have happened:
// only this site's Session can create its ephemeral node, and only it
// moves its vote on from "joined", so the node proves the write was its
// own. Both report success, and the vote is recorded once.
func TestJoinAndVoteWhoseRepliesAreLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	p := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) { c.Servers = p.Servers() })
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/tx/lost-%v", delay)
		if _, err := Begin(ctx, observer, path, []string{"db"}); err != nil {
			t.Fatal(err)
		}
		var part *Participant
		lost, err := testkit.LoseReply(t, ctx, p, observer, tx(path).alive("db"), delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
			part, err = Join(ctx, sess, path, "db")
			return err
		})
		if err != nil {
			t.Fatalf("Join with a lost reply: %v", err)
		}
		if !lost {
			return false
		}
		lost, err = testkit.LoseReply(t, ctx, p, observer, tx(path).vote("db"), delay, testkit.Signal(t, &testHookOutcomeUnknown), func() error {
			return part.Vote(ctx, true)
		})
		if err != nil {
			t.Fatalf("Vote with a lost reply: %v", err)
		}
		data, st, err := observer.Get(ctx, tx(path).vote("db"))
		if err != nil || string(data) != voteCommit || st.Version != 2 {
			t.Fatalf("vote node holds %q at %+v, %v; want %q at version 2", data, st, err, voteCommit)
		}
		return lost
	})
}
