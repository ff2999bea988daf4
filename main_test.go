package zkcoord_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// Session must stop all of its goroutines, and go-zookeeper's, on Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
