package zkcoord_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
)

// A small LostAfter makes the Session ask for replies often enough that a
// healthy Session is never declared Lost. Here Lost comes after 1.5s of
// silence, while go-zookeeper pings only every 3.3s.
func TestSmallLostAfterKeepsHealthySession(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), SessionTimeout: 10 * time.Second, LostAfter: 0.15})
	if s.Timeout() != 10*time.Second {
		t.Fatalf("negotiated timeout %v, want 10s", s.Timeout())
	}
	select {
	case <-s.Done():
		t.Fatalf("a healthy Session ended: %v", s.Err())
	case <-time.After(5 * time.Second): // over three times the Lost threshold
	}
}
