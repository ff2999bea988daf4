package twophase

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// evaluate watches the decision, every vote and the sites' ephemeral
// nodes, writes the decision as soon as it follows from them, and returns
// the outcome that stands. It is how the coordinator (and a site that
// decides for itself) takes part.
func evaluate(ctx context.Context, sess *zkcoord.Session, t tx, sites []string) (Outcome, error) {
	ws := newWatchSet(len(sites) + 2)
	defer ws.close()

	const (
		keyDecision = "\x00decision"
		keyAlive    = "\x00alive"
	)
	votes := make(map[string]string, len(sites))
	alive := map[string]bool{}
	readVote := func(s string) error {
		data, _, w, err := sess.GetW(ctx, t.vote(s))
		if errors.Is(err, zkcoord.ErrNoNode) {
			return fmt.Errorf("%w: %s", ErrNoTransaction, t)
		}
		if err != nil {
			return fmt.Errorf("twophase: %w", err)
		}
		votes[s] = string(data)
		ws.add(s, w)
		return nil
	}
	readAlive := func() error {
		children, _, w, err := sess.ChildrenW(ctx, t.alives())
		if errors.Is(err, zkcoord.ErrNoNode) {
			return fmt.Errorf("%w: %s", ErrNoTransaction, t)
		}
		if err != nil {
			return fmt.Errorf("twophase: %w", err)
		}
		clear(alive)
		for _, c := range children {
			alive[c] = true
		}
		ws.add(keyAlive, w)
		return nil
	}

	// Votes first, then the ephemeral nodes: a vote of "joined" read before
	// a site's ephemeral node is found missing means the site vanished.
	for _, s := range sites {
		if err := readVote(s); err != nil {
			return Outcome{}, err
		}
	}
	if err := readAlive(); err != nil {
		return Outcome{}, err
	}
	readDec := true
	for {
		if readDec {
			o, decided, w, err := readDecision(ctx, sess, t, true)
			if err != nil {
				return Outcome{}, err
			}
			if decided {
				return o, nil
			}
			ws.add(keyDecision, w)
			readDec = false
		}
		o, ok, err := judge(ctx, sess, t, sites, votes, alive)
		if err != nil {
			return Outcome{}, err
		}
		if ok {
			return decide(ctx, sess, t, o, sites)
		}
		select {
		case key := <-ws.events:
			switch key {
			case keyDecision:
				readDec = true
			case keyAlive:
				err = readAlive()
			default:
				err = readVote(key)
			}
			if err != nil {
				return Outcome{}, err
			}
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-sess.Done():
			return Outcome{}, sess.Err()
		}
	}
}

// judge returns the outcome that follows from the votes and the sites'
// ephemeral nodes, if one does.
func judge(ctx context.Context, sess *zkcoord.Session, t tx, sites []string, votes map[string]string, alive map[string]bool) (Outcome, bool, error) {
	commits := 0
	for _, s := range sites {
		switch v := votes[s]; v {
		case "":
			// not joined yet
		case voteAbort:
			return Outcome{Reason: fmt.Sprintf("site %s voted abort", s)}, true, nil
		case voteJoined, voteCommit:
			if v == voteCommit {
				commits++
			}
			if alive[s] {
				continue
			}
			// The vote was read before now: if the ephemeral node is
			// missing now, the site vanished after joining.
			ok, _, err := sess.Exists(ctx, t.alive(s))
			if err != nil {
				return Outcome{}, false, fmt.Errorf("twophase: %w", err)
			}
			if !ok {
				return Outcome{Reason: fmt.Sprintf("site %s vanished", s)}, true, nil
			}
		default:
			return Outcome{Reason: fmt.Sprintf("site %s holds an unrecognised vote %q", s, truncate(v))}, true, nil
		}
	}
	if commits == len(sites) {
		return Outcome{Commit: true}, true, nil
	}
	return Outcome{}, false, nil
}

// watchSet fans the one-shot watches of one evaluation into one channel of
// keys. close ends its goroutines; watches that have not fired stay
// registered with the server until their node changes.
type watchSet struct {
	events chan string
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newWatchSet(n int) *watchSet {
	return &watchSet{events: make(chan string, n), stop: make(chan struct{})}
}

func (ws *watchSet) add(key string, w <-chan zkcoord.Event) {
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		select {
		case <-w:
			select {
			case ws.events <- key:
			case <-ws.stop:
			}
		case <-ws.stop:
		}
	}()
}

func (ws *watchSet) close() {
	close(ws.stop)
	ws.wg.Wait()
}
