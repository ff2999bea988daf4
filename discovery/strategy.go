package discovery

import (
	"math/rand/v2"
	"sync"
)

// Strategy picks one of a provider's available instances, which it is
// given sorted by id and never empty. A Strategy is used by one Provider,
// which calls it under a lock.
type Strategy interface {
	Pick(instances []Instance) Instance
}

// RoundRobin hands out the instances in turn.
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ next uint64 }

func (r *roundRobin) Pick(in []Instance) Instance {
	i := r.next % uint64(len(in))
	r.next++
	return in[i]
}

// Random hands out an instance chosen uniformly at random.
func Random() Strategy { return random{} }

type random struct{}

func (random) Pick(in []Instance) Instance { return in[rand.IntN(len(in))] }

// Sticky hands out the same instance for as long as it is available, and
// otherwise picks a new one with then.
func Sticky(then Strategy) Strategy { return &sticky{then: then} }

type sticky struct {
	mu   sync.Mutex
	then Strategy
	id   string
	has  bool
}

func (s *sticky) Pick(in []Instance) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has {
		for _, x := range in {
			if x.ID == s.id {
				return x
			}
		}
	}
	x := s.then.Pick(in)
	s.id, s.has = x.ID, true
	return x
}
