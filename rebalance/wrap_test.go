package rebalance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// TestCoordinatorKeepsOfficeAcrossTheWrap: clients are ordered by the
// serial order of their sequence numbers, so a client that joins after the
// counter of clients/ wrapped to -2147483648 sorts after the clients that
// joined before, instead of first. Here a long-lived client (sequence 2)
// finds one member that joined just before the wrap and one that joined
// just after it; it must become coordinator, not wait behind the newest.
// The two members are bare nodes of another session, named as ZooKeeper
// would name them, since a real counter cannot be wound that far.
func TestCoordinatorKeepsOfficeAcrossTheWrap(t *testing.T) {
	root, group := newRoot(t), "g"
	ctx := testCtx(t, 60*time.Second)
	op := connect(t)
	_, _, _, clients := rebalance.PathsForTest(root, group)
	if err := op.EnsurePath(ctx, clients); err != nil {
		t.Fatal(err)
	}
	for i, s := range []string{"2147483647", "-2147483648"} {
		node := fmt.Sprintf("%s/_c_6f1d2a7e-5b0c-4e9a-8d3f-%012d-c_%s", clients, i, s)
		if _, err := op.Create(ctx, node, []byte(`{"name":"member"}`), zkcoord.FlagEphemeral); err != nil {
			t.Fatal(err)
		}
	}
	a := start(t, connect(t), root, group, rebalance.Handler{})
	if a.ID() != "c_0000000002" {
		t.Fatalf("id %s: the test needs the third number of clients/", a.ID())
	}
	testkit.WaitFor(t, 30*time.Second, "a coordinates", func() error {
		if s := a.State(); s != rebalance.Coordinator {
			return fmt.Errorf("state %v", s)
		}
		return nil
	})
}
