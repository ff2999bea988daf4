package oracle

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if goroutines outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreCurrent()) }
