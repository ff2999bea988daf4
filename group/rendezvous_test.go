package group

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func TestRendezvous(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	scheduler := connect(t)
	r, err := NewRendezvous(ctx, scheduler, "/jobs/42/master")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRendezvous(ctx, connect(t), r.Path()); !errors.Is(err, ErrExists) {
		t.Fatalf("second NewRendezvous = %v; want ErrExists", err)
	}
	type result struct {
		data string
		err  error
	}
	creator := make(chan result, 1)
	worker := make(chan result, 1)
	go func() {
		d, err := r.Wait(ctx)
		creator <- result{string(d), err}
	}()
	workerSess := connect(t)
	go func() {
		d, err := Await(ctx, workerSess, r.Path())
		worker <- result{string(d), err}
	}()
	select {
	case <-creator:
		t.Fatal("Wait returned before the rendezvous was filled")
	case <-worker:
		t.Fatal("Await returned before the rendezvous was filled")
	case <-time.After(200 * time.Millisecond):
	}

	master := connect(t)
	if err := Fill(ctx, master, r.Path(), []byte("10.0.0.7:7077")); err != nil {
		t.Fatal(err)
	}
	if err := Fill(ctx, master, r.Path(), []byte("10.0.0.8:7077")); !errors.Is(err, ErrFilled) {
		t.Fatalf("second Fill = %v; want ErrFilled", err)
	}
	for _, ch := range []chan result{creator, worker} {
		if got := <-ch; got.err != nil || got.data != "10.0.0.7:7077" {
			t.Fatalf("got %q, %v", got.data, got.err)
		}
	}
	if d, err := Await(ctx, workerSess, r.Path()); err != nil || string(d) != "10.0.0.7:7077" {
		t.Fatalf("Await after the fill = %q, %v", d, err)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Await(ctx, workerSess, r.Path()); !errors.Is(err, ErrNoRendezvous) {
		t.Fatalf("Await after Close = %v; want ErrNoRendezvous", err)
	}
	if err := Fill(ctx, master, r.Path(), nil); !errors.Is(err, ErrNoRendezvous) {
		t.Fatalf("Fill after Close = %v; want ErrNoRendezvous", err)
	}
}

// The rendezvous goes with its creator: waiters are told.
func TestRendezvousGoneWithItsCreator(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	creator := connect(t)
	r, err := NewRendezvous(ctx, creator, "/rv")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	other := connect(t)
	go func() {
		_, err := Await(ctx, other, r.Path())
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Await returned early: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	creator.Close(ctx)
	if err := <-done; !errors.Is(err, ErrNoRendezvous) {
		t.Fatalf("Await after the creator left = %v; want ErrNoRendezvous", err)
	}
}

// Two peers that Fill a rendezvous with the same bytes never both succeed.
// A's write is lost with its connection, and before A looks, B fills the
// node with the same bytes: A cannot tell B's write from its own, and fails
// with ErrOutcomeUnknown rather than report success.
func TestFillNeverTakesAnotherPeersEqualFillForItsOwn(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	r, err := NewRendezvous(ctx, connect(t), "/jobs/7/master")
	if err != nil {
		t.Fatal(err)
	}
	f := new(testkit.WriteFault)
	a, b := connect(t, func(c *zkcoord.Config) { c.Dialer = f.Dial }), connect(t)
	var bErr error
	testHookOutcomeUnknown = func() { bErr = Fill(ctx, b, r.Path(), []byte("host:1")) }
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	hit := f.FailNext(testkit.OpSetData, r.Path())
	aErr := Fill(ctx, a, r.Path(), []byte("host:1"))
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if bErr != nil {
		t.Fatalf("B's Fill: %v", bErr)
	}
	if !errors.Is(aErr, zkcoord.ErrOutcomeUnknown) {
		t.Fatalf("A's Fill = %v; want ErrOutcomeUnknown (two Fills told they were first)", aErr)
	}
}
