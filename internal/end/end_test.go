package end

import (
	"errors"
	"testing"
)

// An End has no cause until it ends, then keeps the first one it was
// given; only the first call ends it.
func TestEndKeepsTheFirstCause(t *testing.T) {
	e := New()
	if err := e.Err(); err != nil {
		t.Fatalf("Err before the end: %v", err)
	}
	select {
	case <-e.Done():
		t.Fatal("Done closed before the end")
	default:
	}
	first, second := errors.New("first"), errors.New("second")
	if !e.End(first) {
		t.Fatal("the first End did not end it")
	}
	if e.End(second) {
		t.Fatal("a second End ended it again")
	}
	<-e.Done()
	if err := e.Err(); err != first {
		t.Fatalf("Err = %v, want %v", err, first)
	}
}

// A nil cause is a cause: the End has ended, and Err stays nil.
func TestEndWithNilCause(t *testing.T) {
	e := New()
	if !e.End(nil) {
		t.Fatal("End(nil) did not end it")
	}
	<-e.Done()
	if e.End(errors.New("later")) || e.Err() != nil {
		t.Fatalf("a later End replaced a nil cause: %v", e.Err())
	}
}
