package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// ProtectedPrefix starts the name of every protected node, followed by a
// 36-character UUID and "-": the form Apache Curator uses, so that Curator
// and zkcoord recognise each other's nodes.
const ProtectedPrefix = "_c_"

// protectedLen is the length of "_c_<uuid>-".
const protectedLen = len(ProtectedPrefix) + 36 + 1

// IsProtected reports whether a node name has the protected form.
func IsProtected(name string) bool {
	if len(name) < protectedLen || !strings.HasPrefix(name, ProtectedPrefix) || name[protectedLen-1] != '-' {
		return false
	}
	_, err := uuid.Parse(name[len(ProtectedPrefix) : protectedLen-1])
	return err == nil
}

// StripProtected removes the "_c_<uuid>-" prefix from a protected name.
func StripProtected(name string) string {
	if IsProtected(name) {
		return name[protectedLen:]
	}
	return name
}

// CreateProtected creates parent/_c_<uuid>-<name> (with a sequence number
// appended if flags include FlagSequence) and returns its path. Missing
// parents are created as containers.
//
// A create whose reply is lost with the connection may or may not have
// happened. CreateProtected finds its node again by the unique prefix after
// reconnecting, for as long as the Session lives, so the caller gets exactly
// one node. If ctx ends before the outcome is known, the node, if it turns
// out to exist, is deleted in the background: no orphan is left.
func (s *Session) CreateProtected(ctx context.Context, parent, name string, data []byte, flags int32) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	prefix := ProtectedPrefix + newUUID() + "-"
	path := Join(parent, prefix+name)
	if err := s.checkCreate(path, data, flags); err != nil {
		return "", err
	}
	return s.createProtected(ctx, parent, prefix, path, data, flags, false)
}

func newUUID() string { return uuid.NewString() }

// createProtected creates path, whose name starts with prefix, under parent.
// If ambiguous, an earlier attempt may have created it.
func (s *Session) createProtected(ctx context.Context, parent, prefix, path string, data []byte, flags int32, ambiguous bool) (string, error) {
	var b backoff
	for {
		if ambiguous {
			found, err := s.findProtected(ctx, parent, prefix)
			if err != nil {
				s.abandon(parent, prefix, nil)
				return "", fmt.Errorf("zkcoord: create %s: %w", path, err)
			}
			if found != "" {
				return found, nil
			}
		}
		created, err := s.createOnce(ctx, path, data, flags, parent, prefix)
		switch {
		case err == nil:
			return created, nil
		case errors.Is(err, zk.ErrNoNode):
			if err := s.EnsureContainers(ctx, parent); err != nil {
				return "", err
			}
			ambiguous = false
			continue
		case IsRetryable(err):
			ambiguous = true
		default:
			return "", err
		}
		if err := b.wait(ctx, s); err != nil {
			s.abandon(parent, prefix, nil)
			return "", fmt.Errorf("zkcoord: create %s: %w", path, err)
		}
	}
}

// createOnce sends one create. If ctx ends first, the outcome is handed to
// abandon, which deletes the node should it exist.
func (s *Session) createOnce(ctx context.Context, path string, data []byte, flags int32, parent, prefix string) (string, error) {
	if err := s.alive(); err != nil {
		return "", err
	}
	type result struct {
		path string
		err  error
	}
	res := make(chan result, 1)
	if !s.spawn(func() {
		p, err := s.conn.Create(s.root.add(path), data, flags, s.cfg.ACL)
		res <- result{s.root.strip(p), err}
	}) {
		return "", s.Err()
	}
	select {
	case r := <-res:
		if r.err != nil && s.alive() != nil {
			return "", s.Err()
		}
		return r.path, wrapPath(r.err, "create", path)
	case <-ctx.Done():
		s.abandon(parent, prefix, func() (string, error) {
			r := <-res
			return r.path, r.err
		})
		return "", fmt.Errorf("zkcoord: create %s: %w", path, ctx.Err())
	}
}

// abandon makes sure a protected node whose creator gave up does not
// survive: it waits for the pending create (if any), then deletes the node
// if it exists, searching by prefix while the Session lives.
func (s *Session) abandon(parent, prefix string, pending func() (string, error)) {
	s.spawn(func() {
		ctx := s.ctx
		if pending != nil {
			p, err := pending()
			switch {
			case err == nil:
				s.deleteQuietly(ctx, p)
				return
			case !IsRetryable(err):
				return // definitely not created
			}
		}
		var b backoff
		for {
			found, err := s.findProtected(ctx, parent, prefix)
			if err == nil {
				if found != "" {
					s.deleteQuietly(ctx, found)
				}
				return
			}
			if b.wait(ctx, s) != nil {
				return
			}
		}
	})
}

// deleteQuietly deletes path as EnsureDeleted does and logs a failure
// while the Session lives.
func (s *Session) deleteQuietly(ctx context.Context, path string) {
	if err := s.EnsureDeleted(ctx, path); err != nil && s.alive() == nil {
		s.log.Warn("could not delete abandoned node", "path", path, "err", err)
	}
}

// findProtected lists parent after a sync and returns the child with the
// given prefix, or "" if there is none.
func (s *Session) findProtected(ctx context.Context, parent, prefix string) (string, error) {
	if err := s.Sync(ctx, parent); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", err
	}
	children, _, err := s.Children(ctx, parent)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, c := range children {
		if strings.HasPrefix(c, prefix) {
			return Join(parent, c), nil
		}
	}
	return "", nil
}
