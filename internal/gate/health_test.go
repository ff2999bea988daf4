package gate

import (
	"context"
	"testing"
	"time"
)

// A Health shuts its gate after the given number of failed checks in a
// row, not before, opens it again on the first check that passes, and
// reports every failure with how many came in a row.
func TestHealth(t *testing.T) {
	// The check answers what the test sends, whenever it is sent: the
	// verdicts, not the interval, pace the test.
	verdicts := make(chan error)
	checked := make(chan struct{})
	stop := make(chan struct{})
	check := func(context.Context) error {
		select {
		case err := <-verdicts:
			defer func() { checked <- struct{}{} }()
			return err
		case <-stop:
			return nil
		}
	}
	var rows []int
	h := NewHealth(check, time.Millisecond, 2, false, func(_ error, n int) { rows = append(rows, n) })
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); h.Run(ctx) }()
	defer func() { cancel(); close(stop); <-stopped }()

	step := func(err error, wantOpen bool) {
		t.Helper()
		verdicts <- err
		<-checked
		waitState(t, h.Gate, wantOpen)
	}
	step(nil, true)
	step(errShut, true)
	step(errShut, false)
	step(errShut, false)
	step(nil, true)
	if len(rows) != 3 || rows[0] != 1 || rows[1] != 2 || rows[2] != 3 {
		t.Fatalf("failures reported as %v, want [1 2 3]", rows)
	}
}

// waitState waits until g's verdict is open (or shut), or fails.
func waitState(t *testing.T, g *Gate, open bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, changed := g.State()
		if got == open {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("gate open = %v, want %v", got, open)
		}
	}
}
