package queue

import "math/rand/v2"

// spread drops a random number of items from the front of the rest of a
// listing, after a taker lost a race for an item (or for some of a batch of
// n). Takers that work through the same listing otherwise move down it in
// step, all trying each item and all but one failing; skipping ahead
// spreads them over the listing, so that they mostly try different items.
// A taker still moves only forward through a listing; what it skips is
// served by the others or found again by its next listing. A taker alone
// loses no race and skips nothing, so it serves the queue in order.
func spread[T any](rest []T, n int) []T {
	if len(rest) == 0 {
		return rest
	}
	span := min(len(rest), max(spreadMin, spreadPer*n))
	return rest[rand.IntN(span+1):]
}

// The span that spread skips within: at least spreadMin items, and
// spreadPer times the batch size.
const (
	spreadMin = 16
	spreadPer = 4
)
