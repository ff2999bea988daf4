package config

import (
	"bytes"
	"context"
	"errors"
)

// CompareAndSet writes data if the node holds exactly expected, and reports
// whether it did, with the node's version afterwards (the one it found when
// it did not write). It compares values, as Curator's DistributedAtomicValue
// does, not versions: a node set to something else and back to expected in
// between still matches. A missing node matches an expected nil or empty
// value and is created.
func (n *Node) CompareAndSet(ctx context.Context, expected, data []byte) (bool, Version, error) {
	for {
		cur, err := n.Get(ctx)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return false, Version{}, err
		}
		if !bytes.Equal(cur.Data, expected) || (!cur.Exists && len(expected) > 0) {
			return false, cur, nil
		}
		var v Version
		if cur.Exists {
			v, err = n.setAt(ctx, data, cur)
		} else {
			v, err = n.Create(ctx, data)
		}
		switch {
		case err == nil:
			return true, v, nil
		case errors.Is(err, ErrConflict), errors.Is(err, ErrExists), errors.Is(err, ErrNotFound):
			continue // changed under us: compare again
		}
		return false, Version{}, err
	}
}
