package zkcoord_test

import (
	"os"
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

// TestMain starts a server for the examples and fails the package if any
// test leaves a goroutine behind: every Session must stop all of its
// goroutines, and go-zookeeper's, on Close. Tests that break servers start
// their own.
func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, nil))
}
