package recipe

import (
	"context"
	"sync"
)

// OwnContext is the context of an ownership (a membership, a claim, a kept
// node), made on first use: it is cancelled, with the ownership's Err as
// its cause, once the ownership's Done channel closes. The zero value is
// ready to use.
type OwnContext struct {
	once sync.Once
	ctx  context.Context
}

// Get returns the context, starting on the first call the goroutine that
// cancels it once done is closed.
func (o *OwnContext) Get(done <-chan struct{}, cause func() error) context.Context {
	o.once.Do(func() {
		ctx, cancel := context.WithCancelCause(context.Background())
		o.ctx = ctx
		go func() {
			<-done
			cancel(cause())
		}()
	})
	return o.ctx
}
