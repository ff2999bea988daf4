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

// A transaction is recognised as it is written, by its first operation's
// path under the chroot, so that reads can be sent right behind it.
func TestMultiIsRecognisedWhenWritten(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, root := range []string{"", "/rooted"} {
		s, err := Connect(ctx, Config{Servers: c.Servers(), Chroot: root})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.EnsurePath(ctx, "/mt/a"); err != nil {
			t.Fatal(err)
		}
		for _, first := range []struct {
			path string
			op   Op
		}{{"/mt/a", CheckOp("/mt/a", -1)}, {"/mt/a/b", CreateOp("/mt/a/b", nil, FlagEphemeral)}} {
			key := writeKey{multi: true, path: s.root.add(first.path)}
			sent := s.written.add(key)
			// The outcome does not matter here, only that it was written.
			_, _ = s.Multi(ctx, first.op, DeleteOp("/mt/a/b", -1))
			s.written.remove(key, sent)
			select {
			case <-sent:
			default:
				t.Fatalf("chroot %q: the transaction starting with %s was not recognised when written", root, first.path)
			}
		}
		s.Close(ctx)
	}
}
