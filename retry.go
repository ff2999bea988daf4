package zkcoord

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/zkcoord/zkcoord/internal/delay"
)

// Retry runs op until it succeeds or fails with an error that IsRetryable
// does not accept, backing off between attempts. It stops when ctx ends or
// the Session ends, returning why. Use it only for operations that are safe
// to repeat: reads, version-checked writes whose repetition you can detect,
// or protected creates (CreateProtected already retries).
func (s *Session) Retry(ctx context.Context, op func(ctx context.Context) error) error {
	var b backoff
	for {
		err := op(ctx)
		if err == nil || !IsRetryable(err) {
			return err
		}
		if err := b.wait(ctx, s); err != nil {
			return err
		}
	}
}

// backoff waits exponentially longer, with jitter, from 5ms to 500ms.
type backoff struct{ n int }

func (b *backoff) next() time.Duration {
	d := 5 * time.Millisecond << min(b.n, 7)
	b.n++
	d = min(d, 500*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}

// wait waits for the next delay, and returns nil after it, or ctx's error,
// or the Session's if it ends first.
func (b *backoff) wait(ctx context.Context, s *Session) error {
	if delay.Sleep(ctx, b.next(), s.done) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Err()
}
