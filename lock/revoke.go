package lock

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// revokeMessage is what Curator's Revoker writes into a lock node to ask
// its holder to give the lock up.
var revokeMessage = []byte("__REVOKE__")

// Revoke asks the holder of the contender node at path to give its lock up,
// in Curator's layout: it writes "__REVOKE__" into the node, which a
// Curator holder made revocable and a Lease watching Revoked both see. The
// holder decides; Revoke does not wait. A node already gone needs no
// revoking and is not an error.
func Revoke(ctx context.Context, sess *zkcoord.Session, path string) error {
	if err := recipe.Validate(sess, path); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	err := sess.Retry(ctx, func(ctx context.Context) error {
		_, err := sess.Set(ctx, path, revokeMessage, -1)
		return err
	})
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return fmt.Errorf("lock: revoke %s: %w", path, err)
	}
	return nil
}

// Revoke asks whoever holds the Mutex now to give it up (see the function
// Revoke), and returns that holder. It fails with ErrNotHeld if nobody
// holds it.
func (m *Mutex) Revoke(ctx context.Context) (Contender, error) {
	h, err := m.holder(ctx, "revoke")
	if err != nil {
		return Contender{}, err
	}
	return h, Revoke(ctx, m.c.sess, h.Path)
}

// Revoked is closed when another client asks this lease's holder to give
// the lock up (Revoke, or Curator's Revoker). The lease is still held: the
// holder decides whether and when to Release it.
func (l *Lease) Revoked() <-chan struct{} {
	l.wantWatch()
	return l.revoked
}

// checkRevoked closes Revoked if data is a revocation request.
func (l *Lease) checkRevoked(data []byte) {
	if bytes.Equal(data, revokeMessage) {
		l.revOnce.Do(func() { close(l.revoked) })
	}
}
