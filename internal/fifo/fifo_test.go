package fifo

import (
	"context"
	"slices"
	"testing"
)

func TestForwardKeepsOrderAndStopsAtLast(t *testing.T) {
	q := New[int]()
	for i := range 1000 { // far more than any channel buffer: nothing dropped
		q.Push(i)
	}
	out := make(chan int)
	done := make(chan struct{})
	go q.Forward(context.Background(), out, func(v int) bool { return v == 999 }, func() { close(done) })
	var got []int
	for v := range out {
		got = append(got, v)
	}
	<-done
	if len(got) != 1000 || !slices.IsSorted(got) {
		t.Fatalf("got %d values, sorted=%v", len(got), slices.IsSorted(got))
	}
}

func TestForwardStopsWhenContextEnds(t *testing.T) {
	q := New[int]()
	q.Push(1)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan int)
	done := make(chan struct{})
	go q.Forward(ctx, out, func(int) bool { return false }, func() { close(done) })
	<-out
	cancel()
	<-done
	if _, ok := <-out; ok {
		t.Fatal("out not closed after ctx ended")
	}
}

func TestFeedKeepsOrderWhileItsOwnerLives(t *testing.T) {
	out := make(chan int) // unbuffered: every send waits for the reader
	f := NewFeed(out)
	for i := range 1000 {
		f.Push(i) // never blocks, though nobody reads yet
	}
	for i := range 1000 {
		if v := <-out; v != i {
			t.Fatalf("got %d, want %d", v, i)
		}
	}
	f.End()
	select {
	case v, ok := <-out:
		t.Fatalf("received %d (open %v) after End", v, ok)
	default: // nothing more, and out is still open
	}
}

func TestFeedEndSendsWhatFitsAndDropsTheRest(t *testing.T) {
	out := make(chan int, 3)
	f := NewFeed(out)
	for i := range 10 {
		f.Push(i)
	}
	f.End() // returns although nobody reads: the rest is dropped
	f.Push(10)
	var got []int
	for len(out) > 0 {
		got = append(got, <-out)
	}
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("after End the channel held %v, want [0 1 2]", got)
	}
}

func TestNilFeedIgnoresEverything(t *testing.T) {
	f := NewFeed[int](nil)
	if f != nil {
		t.Fatal("NewFeed(nil) is not nil")
	}
	f.Push(1)
	f.End()
}

func TestRelayCallsInOrderUntilStopped(t *testing.T) {
	var got []int
	ch, stop := Relay(4, func(v int) { got = append(got, v) })
	f := NewFeed(ch)
	for i := range 100 {
		f.Push(i)
	}
	f.End() // the owner ended: what it sends from now on fits the buffer or is dropped
	stop()
	if len(got) < 4 {
		t.Fatalf("got %v", got)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("got %v: a gap at %d", got, i)
		}
	}
}

func TestFeedThenRunsAfterWhatCameBefore(t *testing.T) {
	out := make(chan int, 1)
	f := NewFeed(out)
	f.Push(1)
	f.Push(2) // waits for room
	ran := make(chan struct{})
	f.Then(func() { close(ran) })
	select {
	case <-ran:
		t.Fatal("Then ran before the values pushed before it were sent")
	default:
	}
	if v := <-out; v != 1 {
		t.Fatalf("got %d", v)
	}
	<-ran // 2 is in the buffer now
	if v := <-out; v != 2 {
		t.Fatalf("got %d", v)
	}
	f.Push(3)
	f.Push(4)
	late := false
	f.Then(func() { late = true })
	f.End() // 3 fits, 4 is dropped, and the function runs all the same
	if !late || len(out) != 1 || <-out != 3 {
		t.Fatalf("after End: ran %v, %d values left", late, len(out))
	}
	f.Then(func() { late = false }) // at once
	if late {
		t.Fatal("Then after End did not run at once")
	}
}
