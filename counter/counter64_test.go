package counter

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A 64-bit counter stores 8 big-endian bytes and counts past 32 bits.
func TestCounter64(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	c, err := New64(sess, "/c64", WithSeed64(math.MaxInt32))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Add(ctx, 2)
	if err != nil || got.Value != math.MaxInt32+2 {
		t.Fatalf("Add past 32 bits = %+v, %v", got, err)
	}
	data, _, err := sess.Get(ctx, "/c64")
	if err != nil || !bytes.Equal(data, Encode64(math.MaxInt32+2)) || len(data) != 8 {
		t.Fatalf("node data = %v, %v; want 8-byte big-endian", data, err)
	}
	if _, err := c.SetCount(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, 1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("Add past MaxInt64 = %v; want ErrOverflow", err)
	}
	if got, err := c.Add(ctx, math.MinInt64); err != nil || got.Value != -1 {
		t.Fatalf("Add(MinInt64) = %+v, %v; want -1", got, err)
	}
	w := c.Watch(ctx)
	defer w.Stop()
	if first := <-w.Changes(); first.Value != -1 {
		t.Fatalf("watch delivered %+v; want -1", first)
	}
}

// A 4-byte node is not a 64-bit count, nor an 8-byte node a 32-bit one:
// each is refused as foreign data and left untouched.
func TestCounterWidthsDoNotMix(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	c32, _ := New(sess, "/n32")
	c64, _ := New64(sess, "/n64")
	mustCreate(t, ctx, c32)
	mustCreate(t, ctx, c64)
	wrong64, _ := New64(sess, "/n32")
	if _, err := wrong64.Add(ctx, 1); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("64-bit Add on a 4-byte node = %v; want ErrBadData", err)
	}
	wrong32, _ := New(sess, "/n64")
	if _, err := wrong32.Add(ctx, 1); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("32-bit Add on an 8-byte node = %v; want ErrBadData", err)
	}
	if _, err := New(sess, "/x", WithSeed64(math.MaxInt32+1)); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("a 32-bit counter with a 33-bit seed = %v; want ErrInvalidConfig", err)
	}
}

// Go and Curator's DistributedAtomicLong share one 64-bit counter and
// increment it concurrently without losing a step.
func TestCounter64WithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess := connect(t)
	path := "/curator/long"
	java := interop.CompileJava(t, "testdata/AtomicLongPeer.java").
		Start(t, cluster.ConnectString(), sess.Config().Chroot+path)
	expect(t, ctx, java, "ready")

	c, _ := New64(sess, path)
	if _, err := c.SetCount(ctx, 1<<40); err != nil {
		t.Fatal(err)
	}
	send(t, java, "get")
	if line := expect(t, ctx, java, "value "); line != "value 1099511627776" {
		t.Fatalf("Curator reads %q; want 2^40", line)
	}
	send(t, java, "add 40")
	for range 40 {
		if _, err := c.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, ctx, java, "added 40")
	send(t, java, "get")
	line := expect(t, ctx, java, "value ")
	if got, _ := c.Get(ctx); got.Value != 1<<40+80 || !strings.HasSuffix(line, " 1099511627856") {
		t.Fatalf("after 40 + 40 increments: Go %d, Curator %q; want 2^40+80", got.Value, line)
	}
}
