package zkcoord_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

// A Session that declares itself Lost while a new connection is in the
// middle of its handshake must not let that connection close the ZooKeeper
// session: the owners of its ephemeral nodes stop at Lost, and the margin
// between Lost and the server's expiry exists so that they can finish
// before anyone else may start. Only the server's expiry may delete the
// nodes.
func TestLostDuringHandshakeLeavesSessionToExpire(t *testing.T) {
	c := zktest.Start(t)
	d := newFaultyDialer()
	// Timeline after the last reply: Suspended at 6s (3/4 of Lost), the
	// silent connection dropped then; go-zookeeper dials again a second
	// later and its handshake hangs; Lost at 8s; a handshake without an
	// answer would be dropped at 9s.
	const timeout = 20 * time.Second
	victim := connect(t, zkcoord.Config{Servers: c.Servers(), Dialer: d.Dial, SessionTimeout: timeout, LostAfter: 0.4})
	observer := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 90*time.Second)
	if victim.Timeout() != timeout {
		t.Fatalf("negotiated timeout %v, want %v", victim.Timeout(), timeout)
	}
	if _, err := victim.Create(ctx, "/owned", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	ok, _, gone, err := observer.ExistsW(ctx, "/owned")
	if err != nil || !ok {
		t.Fatalf("observer ExistsW: %v %v", ok, err)
	}
	w := victim.Watch(ctx)
	nextState(t, w, time.Second) // Connected
	d.stall()
	defer d.release()

	select {
	case <-victim.Done():
	case <-ctx.Done():
		t.Fatal("the stalled Session never ended")
	}
	// Let the handshake complete, as it would once a slow server answers.
	d.release()
	var lost zkcoord.StateChange
	for ch := range w {
		lost = ch
	}
	if lost.State != zkcoord.Lost {
		t.Fatalf("last state %v, want Lost", lost.State)
	}
	if !d.handshakingAt(lost.At) {
		t.Fatal("no handshake was in flight when the Session was lost: the test missed its timing")
	}
	if !errors.Is(victim.Err(), zkcoord.ErrSessionLost) {
		t.Fatalf("Err = %v, want ErrSessionLost", victim.Err())
	}
	if err := victim.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The Session has stopped everything; the server must still hold the
	// session until it expires it.
	if ok, _, err := observer.Exists(ctx, "/owned"); err != nil || !ok {
		t.Fatalf("after the Lost Session's teardown its ephemeral node is gone (exists=%v, err=%v): "+
			"the teardown closed the session on the server", ok, err)
	}
	select {
	case ev := <-gone:
		if ev.Type != zkcoord.EventNodeDeleted {
			t.Fatalf("observer event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("the server never expired the lost session")
	}
}
