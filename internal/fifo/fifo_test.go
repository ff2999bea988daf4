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
