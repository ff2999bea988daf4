package lock

import (
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Option configures a Mutex, RWMutex or Semaphore.
type Option func(*options)

type options struct {
	data      []byte
	delay     time.Duration // Mutex: the lock-delay (WithLockDelay)
	limitFrom string        // Semaphore: the node holding the limit (WithLimitFrom)
	kazoo     bool          // Semaphore: Kazoo's layout (WithKazooLayout)
}

// WithData sets the data stored in every node the lock creates, for example
// an identifier of the process, which tools can show for each contender
// (Curator stores the host's address there, Kazoo its "identifier").
// Default: none.
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte(nil), data...) }
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// checkArgs validates what every constructor takes.
func checkArgs(sess *zkcoord.Session, path string, o options) error {
	if err := recipe.Validate(sess, path); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if o.delay < 0 {
		return fmt.Errorf("lock: %w: negative lock-delay %v", zkcoord.ErrInvalidConfig, o.delay)
	}
	if o.limitFrom != "" {
		if err := zkcoord.ValidatePath(o.limitFrom); err != nil {
			return fmt.Errorf("lock: limit node: %w", err)
		}
	}
	if max := sess.Config().MaxDataSize; len(o.data) > max {
		return fmt.Errorf("lock: %w: %d bytes of node data, limit %d", zkcoord.ErrTooLarge, len(o.data), max)
	}
	return nil
}
