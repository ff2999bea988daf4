package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
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
	var mode int32
	switch flags {
	case FlagPersistent:
		mode = zk.FlagTTL
	case FlagSequence:
		mode = zk.FlagPersistentSequentialWithTTL
	default:
		return "", fmt.Errorf("zkcoord: create %s: a TTL node is persistent; flags %d", path, flags)
	}
	if ttl < time.Millisecond || ttl > MaxTTL {
		return "", fmt.Errorf("%w: TTL %v for %s is outside [1ms, %v]", ErrInvalidConfig, ttl, path, MaxTTL)
	}
	created, err := call(s, ctx, func() (string, error) {
		return s.conn.CreateTTL(s.root.add(path), data, mode, s.cfg.ACL, ttl)
	})
	if err != nil && unnamed(ctx, err) {
		err = fmt.Errorf("%w (%v)", ErrTTLDisabled, err)
	}
	if err != nil {
		return "", wrapPath(err, "create", path)
	}
	return s.root.strip(created), nil
}

// unnamed reports whether err is a server reply go-zookeeper has no name
// for. For a well-formed TTL create the one such reply is "unimplemented"
// (code -6), which is how a server without extended types refuses it;
// go-zookeeper returns it as an anonymous error, so it is recognised by
// being none of the errors a create can otherwise end with.
func unnamed(ctx context.Context, err error) bool {
	known := []error{
		zk.ErrNodeExists, zk.ErrNoNode, zk.ErrNoAuth, zk.ErrBadArguments, zk.ErrInvalidACL,
		zk.ErrNoChildrenForEphemerals, zk.ErrClosing, zk.ErrConnectionClosed, zk.ErrNoServer,
		zk.ErrSessionExpired, zk.ErrSessionMoved, zk.ErrAuthFailed, zk.ErrUnknown,
		ErrSessionLost, ErrSessionExpired, ErrSessionClosed, ErrAuthFailed,
	}
	for _, k := range known {
		if errors.Is(err, k) {
			return false
		}
	}
	var netErr net.Error
	return ctx.Err() == nil && !IsRetryable(err) && !errors.As(err, &netErr) && !errors.Is(err, io.EOF)
}
