package fifo

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if one leaves a goroutine behind: a Feed's
// ends with End, a Relay's with stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
