package election_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/failover"
)

// A plain election at P and a failover group at P (whose election runs at
// P/lock) are two elections: each would lead at once. Whichever takes
// office second is refused with ErrOtherElection, both ways, and can lead
// once the other has resigned.
func TestOtherElectionOnTheSamePath(t *testing.T) {
	ctx := testCtx(t, long)
	a := connect(t, shared.Servers())
	b := connect(t, shared.Servers())
	for _, plainFirst := range []bool{true, false} {
		path := uniquePath(t)
		plain := newElection(t, a, path, election.WithID("plain"))
		// The election a failover group at path runs.
		fo, err := failover.New(b, path, func(ctx context.Context, prev failover.Breadcrumb) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		grouped := fo.Election()
		first, second := plain, grouped
		if !plainFirst {
			first, second = grouped, plain
		}
		l, err := first.Campaign(ctx)
		if err != nil {
			t.Fatalf("first Campaign: %v", err)
		}
		if _, err := second.Campaign(ctx); !errors.Is(err, election.ErrOtherElection) {
			t.Fatalf("plain first %v: second Campaign = %v, want ErrOtherElection", plainFirst, err)
		}
		if err := l.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		l2, err := second.Campaign(ctx)
		if err != nil {
			t.Fatalf("plain first %v: Campaign after the other resigned: %v", plainFirst, err)
		}
		if err := l2.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
