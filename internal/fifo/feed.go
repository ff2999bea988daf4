package fifo

import "sync"

// Feed sends values to a channel it does not own (a caller's), in order,
// from a goroutine of its own, through an unbounded Queue: Push never
// blocks, so whoever pushes is never delayed by the channel's reader.
// Until End, nothing is dropped. After End, what is still queued is sent
// only while the channel takes it at once (a reader waiting, or room in
// its buffer); the first value that would block is dropped with all after
// it. A Feed never closes its channel. A nil *Feed (see NewFeed) ignores
// Push and End, and Then runs its function at once.
type Feed[T any] struct {
	q    *Queue[step[T]]
	out  chan<- T
	end  chan struct{}
	done chan struct{}
	once sync.Once
}

// step is a value to send, or a function to run (then set).
type step[T any] struct {
	v    T
	then func()
}

// NewFeed starts a Feed to out; it returns nil when out is nil.
func NewFeed[T any](out chan<- T) *Feed[T] {
	if out == nil {
		return nil
	}
	f := &Feed[T]{q: New[step[T]](), out: out, end: make(chan struct{}), done: make(chan struct{})}
	go f.run()
	return f
}

// Push queues v; after End it is dropped.
func (f *Feed[T]) Push(v T) {
	if f != nil && !f.ended() {
		f.q.Push(step[T]{v: v})
	}
}

// Then runs fn on the Feed's goroutine once every value pushed before it
// has been sent (or dropped after End); after End, or on a nil Feed, at
// once. It orders a signal (a channel closed by fn) after the events
// that lead to it. fn must not block.
func (f *Feed[T]) Then(fn func()) {
	if f == nil || f.ended() {
		fn()
		return
	}
	f.q.Push(step[T]{then: fn})
}

func (f *Feed[T]) ended() bool {
	select {
	case <-f.end:
		return true
	default:
		return false
	}
}

// End tells the Feed that its owner has ended, and returns once the
// Feed's goroutine has: everything the Feed will ever send is then in
// the channel or received, and every function given to Then has run. It
// is safe to call more than once.
func (f *Feed[T]) End() {
	if f == nil {
		return
	}
	f.once.Do(func() { close(f.end) })
	<-f.done
}

func (f *Feed[T]) run() {
	defer close(f.done)
	for {
		select {
		case <-f.q.Ready():
		case <-f.end:
			f.flush(f.q.PopAll())
			return
		}
		steps := f.q.PopAll()
		for i, s := range steps {
			if s.then != nil {
				s.then()
				continue
			}
			select {
			case f.out <- s.v:
			case <-f.end:
				f.flush(append(steps[i:], f.q.PopAll()...))
				return
			}
		}
	}
}

// flush sends values while the channel takes them at once, and runs
// every function.
func (f *Feed[T]) flush(steps []step[T]) {
	blocked := false
	for _, s := range steps {
		switch {
		case s.then != nil:
			s.then()
		case !blocked:
			select {
			case f.out <- s.v:
			default:
				blocked = true
			}
		}
	}
}
