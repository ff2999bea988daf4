package elect

import (
	"context"
	"sync"
)

// Parallel runs fs concurrently and waits for all of them. Requests issued
// from several goroutines at once share one round trip on the Session's
// connection.
func Parallel(fs ...func()) {
	var wg sync.WaitGroup
	wg.Add(len(fs) - 1)
	for _, f := range fs[1:] {
		go func() {
			defer wg.Done()
			f()
		}()
	}
	fs[0]()
	wg.Wait()
}

// Detach runs f with a context that does not end with ctx, and returns
// early, with ctx's error, when ctx ends. f must not write anything the
// caller reads after an early return.
func Detach(ctx context.Context, f func(ctx context.Context) error) error {
	if ctx.Done() == nil {
		return f(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- f(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DetachValue is Detach for an f that returns a value: the value f
// returned, or on any error the zero value, never one f may still be
// writing.
func DetachValue[T any](ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	var v T
	err := Detach(ctx, func(ctx context.Context) (err error) {
		v, err = f(ctx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}
