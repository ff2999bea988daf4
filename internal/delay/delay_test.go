package delay

import (
	"context"
	"testing"
	"time"
)

// Sleep reports whether the whole delay passed: true when nothing ended
// it, false when ctx ended or stop closed first.
func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond, nil) {
		t.Fatal("a short sleep did not pass")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour, nil) {
		t.Fatal("a sleep with an ended context passed")
	}
	stop := make(chan struct{})
	close(stop)
	if Sleep(context.Background(), time.Hour, stop) {
		t.Fatal("a sleep with a closed stop passed")
	}
}
