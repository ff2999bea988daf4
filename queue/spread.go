package queue

import (
	"math/rand/v2"
	"sync/atomic"
)

// spreader moves a taker ahead after it lost a race for an item (or for
// some of a batch). Takers that work through the same listing otherwise
// move down it in step, all trying each item and all but one failing;
// skipping ahead spreads them over the listing, so that they mostly try
// different items. A taker still moves only forward through a listing;
// what it skips is served by the others or found again by its next
// listing. A taker alone loses no race and skips nothing, so it serves the
// queue in order.
//
// The span skipped within starts at spreadMin items (spreadPer times the
// batch, if larger) and doubles with every race lost in a row, up to
// spreadMaxDoublings times, so that many takers spread further than a few.
type spreader struct {
	streak atomic.Int32 // races lost in a row
}

const (
	spreadMin          = 16
	spreadPer          = 4
	spreadMaxDoublings = 6
)

// won records a take that lost no race.
func (s *spreader) won() { s.streak.Store(0) }

// lost records a lost race by a take of n items and returns how many of
// the next items to skip at most.
func (s *spreader) lost(n int) int {
	streak := min(s.streak.Add(1)-1, spreadMaxDoublings)
	return max(spreadMin, spreadPer*n) << streak
}

// skipAhead drops a random number, at most span, of the first items of
// rest.
func skipAhead[T any](rest []T, span int) []T {
	if len(rest) == 0 {
		return rest
	}
	return rest[rand.IntN(min(len(rest), span)+1):]
}
