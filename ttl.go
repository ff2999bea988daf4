package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// ErrTTLDisabled: the server does not accept TTL nodes. ZooKeeper 3.5.3 and
// later create them only with extendedTypesEnabled (the system property
// zookeeper.extendedTypesEnabled=true).
var ErrTTLDisabled = errors.New("zkcoord: TTL nodes are not enabled on the server (zookeeper.extendedTypesEnabled=true)")

// MaxTTL is the longest TTL ZooKeeper accepts.
const MaxTTL = (1<<40 - 1) * time.Millisecond

// CreateTTL creates a persistent node (flags FlagPersistent, or
// FlagSequence for a sequential one) that the server deletes once it has
// had no children for ttl and was not changed in that time, and returns
// its path. Like Create it is sent once; use it for nodes whose loss after
// a connection loss the caller can tell. A server without TTL nodes fails
// it with ErrTTLDisabled.
func (s *Session) CreateTTL(ctx context.Context, path string, data []byte, flags int32, ttl time.Duration) (string, error) {
	if err := s.checkCreate(path, data, flags); err != nil {
		return "", err
	}
	var mode wire.CreateMode
	switch flags {
	case FlagPersistent:
		mode = wire.ModePersistentWithTTL
	case FlagSequence:
		mode = wire.ModePersistentSequentialWithTTL
	default:
		return "", fmt.Errorf("zkcoord: create %s: a TTL node is persistent; flags %d", path, flags)
	}
	if ttl < time.Millisecond || ttl > MaxTTL {
		return "", fmt.Errorf("%w: TTL %v for %s is outside [1ms, %v]", ErrInvalidConfig, ttl, path, MaxTTL)
	}
	resp, err := call(s, ctx, func(ctx context.Context) (wire.Create2Response, error) {
		r, _, err := s.conn.CreateTTL(ctx, s.root.add(path), data, s.aclFor(path), mode, ttl)
		return r, err
	})
	if errors.Is(err, wire.ErrUnimplemented) {
		// How a server without extended types refuses a TTL node.
		err = fmt.Errorf("%w (%v)", ErrTTLDisabled, err)
	}
	if err != nil {
		return "", wrapPath(err, "create", path)
	}
	return s.root.strip(resp.Path), nil
}
