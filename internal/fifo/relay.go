package fifo

import "sync"

// Relay is the reading end of an event channel for a caller that wants a
// function called: it calls f with each value sent to the returned channel
// (buffered for n values), in order, on a goroutine of its own. stop, to
// be called once the channel's owner has ended, calls f with what the
// channel still holds and returns after f's last call.
func Relay[T any](n int, f func(T)) (ch chan<- T, stop func()) {
	c := make(chan T, n)
	end, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case v := <-c:
				f(v)
			case <-end:
				for len(c) > 0 {
					f(<-c)
				}
				return
			}
		}
	}()
	var once sync.Once
	return c, func() {
		once.Do(func() { close(end) })
		<-done
	}
}
