package zkcoord

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/zktest"
)

// The listing rides right behind the create: createThenList returns it
// without a second round trip.
func TestCreateThenListIsOneRoundTrip(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Connect(ctx, Config{Servers: c.Servers()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.EnsurePath(ctx, "/one"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		prefix := ProtectedPrefix + newUUID() + "-"
		node, kids, err := s.createThenList(ctx, Join("/one", prefix+"n-"), nil, FlagEphemeralSequential, "/one", prefix)
		if err != nil {
			t.Fatal(err)
		}
		if kids == nil {
			t.Fatalf("attempt %d: no listing came with the create", i)
		}
		if !slices.Contains(kids, Base(node)) || len(kids) != i+1 {
			t.Fatalf("attempt %d: listing %v", i, kids)
		}
	}
}
