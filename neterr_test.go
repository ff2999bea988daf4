package zkcoord_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// A failed socket write is a connection loss, never a raw net error:
// idempotent requests are retried, the others fail with an error that
// IsRetryable accepts and that wraps ErrConnectionClosed.
func TestRawWriteErrorIsConnectionLoss(t *testing.T) {
	c := zktest.Start(t)
	var f testkit.WriteFault
	s := connect(t, zkcoord.Config{Servers: c.Servers(), Dialer: f.Dial})
	ctx := testCtx(t, 60*time.Second)
	if _, err := s.Create(ctx, "/x", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}

	hit := f.FailNext(testkit.OpGetData, "/x")
	data, _, err := s.Get(ctx, "/x")
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the test did not exercise the fault")
	}
	if err != nil || string(data) != "v" {
		t.Fatalf("Get across a failed write = %q, %v; want it retried", data, err)
	}

	hit = f.FailNext(testkit.OpCreate, "/y")
	_, err = s.Create(ctx, "/y", nil, 0)
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the test did not exercise the fault")
	}
	if !zkcoord.IsRetryable(err) || !errors.Is(err, zkcoord.ErrConnectionClosed) {
		t.Fatalf("Create whose write failed = %v (%T); want a retryable ErrConnectionClosed", err, errors.Unwrap(err))
	}
	if s.Err() != nil {
		t.Fatalf("the Session ended: %v", s.Err())
	}
}
