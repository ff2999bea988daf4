package lease

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// throughProxy connects a Session whose traffic goes through a fault proxy.
func throughProxy(t *testing.T) (*zkcoord.Session, *zktest.Proxy) {
	p := cluster.NewProxy(t)
	return connect(t, func(c *zkcoord.Config) { c.Servers = p.Servers() }), p
}

// holderRecord reads the holder node at path through sess.
func holderRecord(t *testing.T, ctx context.Context, sess *zkcoord.Session, path string) (record, *zkcoord.Stat) {
	t.Helper()
	data, st, err := sess.Get(ctx, zkcoord.Join(path, holderNode))
	if err != nil {
		t.Fatalf("read the holder node: %v", err)
	}
	r, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return r, st
}

// A TryAcquire whose context ends while its create is in flight, after the
// server applied it, cannot say the lease was not obtained: the lease is
// held under its id. It fails with an error wrapping ErrOutcomeUnknown.
func TestTryAcquireWhoseContextEndsInFlightIsUnknown(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/ctx-%v", delay)
		if err := observer.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		_, _, changed, err := observer.ExistsW(ctx, zkcoord.Join(path, holderNode))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Delay(delay); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := TryAcquire(cctx, sess, path, time.Hour, WithID("a"))
			done <- err
		}()
		select {
		case <-changed: // applied; the reply is still in the slowed link
			cancel()
		case err := <-done:
			t.Fatalf("TryAcquire returned before its write reached the server: %v", err)
		case <-ctx.Done():
			t.Fatal("the write never reached the server")
		}
		err = <-done
		if err := p.Heal(); err != nil {
			t.Fatal(err)
		}
		if err == nil {
			return false // the reply came first
		}
		if !errors.Is(err, zkcoord.ErrOutcomeUnknown) {
			t.Fatalf("TryAcquire cut off by its context = %v; want an error wrapping ErrOutcomeUnknown (the lease is held under its id)", err)
		}
		if r, _ := holderRecord(t, ctx, observer, path); r.Holder != "a" {
			t.Fatalf("holder = %q; want a", r.Holder)
		}
		return true
	})
}

// A TryAcquire whose reply is lost, its create applied, obtains the lease:
// it reports what the holder node holds, its own id until its end.
func TestTryAcquireWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/lost-%v", delay)
		if err := observer.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		var l Lease
		lost, err := testkit.LoseReply(t, ctx, p, observer, zkcoord.Join(path, holderNode), delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
			l, err = TryAcquire(ctx, sess, path, time.Hour, WithID("a"))
			return err
		})
		if err != nil || !l.Obtained || l.Holder != "a" {
			t.Fatalf("TryAcquire with a lost reply = %+v, %v; want obtained by a", l, err)
		}
		if r, _ := holderRecord(t, ctx, observer, path); r.Holder != "a" || r.End != l.End.Format(timeLayout) {
			t.Fatalf("holder node = %+v; want a until %v", r, l.End)
		}
		return lost
	})
}

// A's create fails unsent and, before A looks, B writes under the same id
// exactly the record A meant to write. A cannot tell B's record from its
// own, so it does not take it as its own write: it renews the lease held
// under its id with a write of its own, which surely happened, and only
// then reports it obtained.
func TestTryAcquireNeverTakesAnEqualRecordForItsOwnWrite(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	f := new(testkit.WriteFault)
	sess := connect(t, func(c *zkcoord.Config) { c.Dialer = f.Dial })
	other := connect(t)
	clk := &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := sess.EnsurePath(ctx, "/equal"); err != nil {
		t.Fatal(err)
	}
	var (
		bErr error
		bSt  *zkcoord.Stat
	)
	testHookOutcomeUnknown = func() {
		if _, bErr = TryAcquire(ctx, other, "/equal", time.Hour, WithID("x"), WithClock(clk.Now)); bErr == nil {
			_, bSt = holderRecord(t, ctx, other, "/equal")
		}
	}
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	hit := f.FailNext(testkit.OpCreate, "/equal/"+holderNode)

	l, err := TryAcquire(ctx, sess, "/equal", time.Hour, WithID("x"), WithClock(clk.Now))
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if bErr != nil {
		t.Fatalf("B's TryAcquire: %v", bErr)
	}
	if err != nil || !l.Obtained || l.Holder != "x" {
		t.Fatalf("A's TryAcquire = %+v, %v; want obtained by x", l, err)
	}
	r, st := holderRecord(t, ctx, other, "/equal")
	if r.Holder != "x" || r.End != l.End.Format(timeLayout) {
		t.Fatalf("holder node = %+v; want x until %v", r, l.End)
	}
	if st.Czxid == bSt.Czxid {
		t.Fatalf("the holder node is still B's (czxid 0x%x): A reported a lease on a record it did not write", st.Czxid)
	}
}
