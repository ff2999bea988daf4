package rebalance

import "testing"

// SetOperatorOutcomeUnknownHookForTest makes AddResource and
// RemoveResource call f when a write fails with a connection loss, before
// they settle its outcome, until the test ends.
func SetOperatorOutcomeUnknownHookForTest(t testing.TB, f func()) {
	testHookOutcomeUnknown = f
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
}
