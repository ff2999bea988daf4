package lock

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// WithLimitFrom makes a Semaphore read its limit from the node at path,
// which holds a 32-bit count in the layout of Apache Curator's SharedCount
// (4 bytes, big-endian; zkcoord's counter.Counter reads and writes it), as
// InterProcessSemaphoreV2 does when given a SharedCountReader. Every
// acquirer reads the limit when it counts the leases, and one that waits
// for a lease watches the node too, so a changed limit applies to the
// next acquisition: a raised one lets waiters in at once, a lowered one
// grants no lease beyond it, while holders keep theirs. A limit below 1
// grants none.
//
// While the node does not exist, or is empty (as Kazoo's Counter creates
// it), the maxLeases given to NewSemaphore is the limit, as a SharedCount's
// seed is. Other data is refused: acquisitions fail with an error wrapping
// zkcoord.ErrBadData. The Semaphore never writes the node. Only a
// Semaphore takes this option; NewMutex and NewRWMutex refuse it.
func WithLimitFrom(path string) Option {
	return func(o *options) { o.limitFrom = path }
}

// onlyForSemaphore refuses the options that only a Semaphore takes.
func (o options) onlyForSemaphore(kind string) error {
	switch {
	case o.limitFrom != "":
		return fmt.Errorf("lock: %w: WithLimitFrom is for a Semaphore, not a %s", zkcoord.ErrInvalidConfig, kind)
	case o.kazoo:
		return fmt.Errorf("lock: %w: WithKazooLayout is for a Semaphore, not a %s", zkcoord.ErrInvalidConfig, kind)
	}
	return nil
}

// Limit returns the number of leases the semaphore grants now: MaxLeases,
// or with WithLimitFrom the count in the limit node (see there).
func (s *Semaphore) Limit(ctx context.Context) (int, error) {
	n, _, err := s.limit(ctx, false)
	return n, err
}

// limit reads the current limit and, with watch, a watch that fires when
// the limit node changes (nil for a fixed limit).
func (s *Semaphore) limit(ctx context.Context, watch bool) (int, <-chan zkcoord.Event, error) {
	if s.limitFrom == "" {
		return s.max, nil, nil
	}
	var (
		data []byte
		st   *zkcoord.Stat
		w    <-chan zkcoord.Event
		err  error
	)
	if watch {
		data, st, w, err = s.sess.DataW(ctx, s.limitFrom)
	} else {
		data, st, err = s.sess.Get(ctx, s.limitFrom)
		if errors.Is(err, zkcoord.ErrNoNode) {
			err = nil
		}
	}
	switch {
	case err != nil:
		return 0, nil, fmt.Errorf("lock: semaphore %s: limit: %w", s.path, err)
	case st == nil || len(data) == 0:
		return s.max, w, nil
	case len(data) != 4:
		return 0, nil, fmt.Errorf("lock: semaphore %s: limit node %s holds %d bytes, want a 4-byte count: %w",
			s.path, s.limitFrom, len(data), zkcoord.ErrBadData)
	}
	return max(0, int(int32(binary.BigEndian.Uint32(data)))), w, nil
}
