package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
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
				s.abandon(parent, prefix)
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
		case errors.Is(err, ErrNoNode):
			if err := s.EnsureContainers(ctx, parent); err != nil {
				return "", err
			}
			ambiguous = false
			continue
		case IsRetryable(err):
			ambiguous = !errors.Is(err, zkconn.ErrNotSent)
		default:
			return "", err
		}
		if err := b.wait(ctx, s); err != nil {
			s.abandon(parent, prefix)
			return "", fmt.Errorf("zkcoord: create %s: %w", path, err)
		}
	}
}

// createOnce sends one create. If ctx ends after the request was written,
// the node, should it exist, is deleted in the background (abandon).
func (s *Session) createOnce(ctx context.Context, path string, data []byte, flags int32, parent, prefix string) (string, error) {
	created, _, err := s.create(ctx, path, data, flags)
	if errors.Is(err, ErrOutcomeUnknown) && s.alive() == nil {
		s.abandon(parent, prefix)
	}
	return created, wrapPath(err, "create", path)
}

// abandon makes sure a protected node whose creator gave up does not
// survive: it deletes the node if it exists, searching by prefix while the
// Session lives. The search starts with a sync issued after the create, so
// it sees the create if the server applied it.
func (s *Session) abandon(parent, prefix string) {
	s.spawn(func() {
		ctx := s.ctx
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

// deleteQuietly deletes path as ensureDeleted does and logs a failure
// while the Session lives.
func (s *Session) deleteQuietly(ctx context.Context, path string) {
	if err := s.ensureDeleted(ctx, path); err != nil && s.alive() == nil {
		s.log.Warn("could not delete abandoned node", "path", path, "err", err)
	}
}

// findProtected lists parent after a sync and returns the child with the
// given prefix, or "" if there is none.
func (s *Session) findProtected(ctx context.Context, parent, prefix string) (string, error) {
	if err := s.Sync(ctx, parent); err != nil && !errors.Is(err, ErrNoNode) {
		return "", err
	}
	children, _, err := s.Children(ctx, parent)
	if errors.Is(err, ErrNoNode) {
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

// CreateProtectedAndList is CreateProtected followed by a listing of
// parent's children that is certain to include the new node. The listing
// is issued right behind the create, and the connection writes requests in
// the order they were issued, so both usually take a single round trip:
// this is how a lock contender learns its place at the cost of one
// request. Children are returned unsorted.
func (s *Session) CreateProtectedAndList(ctx context.Context, parent, name string, data []byte, flags int32) (string, []string, error) {
	if err := ValidateName(name); err != nil {
		return "", nil, err
	}
	prefix := ProtectedPrefix + newUUID() + "-"
	path := Join(parent, prefix+name)
	if err := s.checkCreate(path, data, flags); err != nil {
		return "", nil, err
	}
	node, kids, err := s.createThenList(ctx, path, data, flags, parent, prefix)
	switch {
	case err == nil && kids != nil:
		return node, kids, nil
	case err == nil: // created, but the listing has to be taken again
	case IsRetryable(err), errors.Is(err, ErrNoNode):
		// A lost reply, or a missing parent: the careful path, which finds
		// a node that was created after all.
		ambiguous := IsRetryable(err) && !errors.Is(err, zkconn.ErrNotSent)
		node, err = s.createProtected(ctx, parent, prefix, path, data, flags, ambiguous)
		if err != nil {
			return "", nil, err
		}
	default:
		return "", nil, err
	}
	kids, _, err = s.Children(ctx, parent)
	if err != nil {
		return node, nil, err
	}
	return node, kids, nil
}

// createThenList issues the create and the listing one behind the other.
// It returns the node and the listing; a nil listing with a nil error
// means the node exists but the listing must be taken again.
func (s *Session) createThenList(ctx context.Context, path string, data []byte, flags int32, parent, prefix string) (string, []string, error) {
	if err := s.alive(); err != nil {
		return "", nil, err
	}
	var created wire.Create2Response
	var listed wire.GetChildren2Response
	create := s.conn.Start(ctx, wire.OpCreate2,
		&wire.CreateRequest{Path: s.root.add(path), Data: data, ACL: s.aclFor(path), Flags: wire.CreateMode(flags)}, &created)
	list := s.conn.Start(ctx, wire.OpGetChildren2, &wire.GetChildren2Request{Path: s.root.add(parent)}, &listed)
	_, cerr := create.Wait()
	_, lerr := list.Wait()
	if cerr != nil {
		cerr = s.callErr(cerr)
		if errors.Is(cerr, ErrOutcomeUnknown) && s.alive() == nil {
			s.abandon(parent, prefix)
		}
		return "", nil, wrapPath(cerr, "create", path)
	}
	node := s.root.strip(created.Path)
	if lerr != nil || !slices.Contains(listed.Children, Base(node)) {
		return node, nil, nil
	}
	return node, listed.Children, nil
}
