package zkcoord

import (
	"context"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// aclFor is the ACL, as sent, of a node created at path (relative to the
// chroot).
func (s *Session) aclFor(path string) []wire.ACL {
	if s.cfg.ACLFor != nil {
		if acl := s.cfg.ACLFor(path); len(acl) > 0 {
			return wireACL(acl)
		}
	}
	return s.acl
}

// GetACL returns a node's ACL and stat. Like every read it is retried on
// connection loss.
func (s *Session) GetACL(ctx context.Context, path string) ([]ACL, *Stat, error) {
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	var resp wire.GetACLResponse
	_, err := retryCall(s, ctx, func(ctx context.Context) (struct{}, error) {
		_, err := s.conn.Do(ctx, wire.OpGetACL, &wire.GetACLRequest{Path: s.root.add(path)}, &resp)
		return struct{}{}, err
	})
	if err != nil {
		return nil, nil, wrapPath(err, "get acl", path)
	}
	acl := make([]ACL, len(resp.ACL))
	for i, a := range resp.ACL {
		acl[i] = ACL{Perms: int32(a.Perms), Scheme: a.ID.Scheme, ID: a.ID.ID}
	}
	return acl, statOf(resp.Stat), nil
}

// SetACL replaces a node's ACL if its ACL version (Stat.Aversion) matches
// (-1 matches any). It is sent once, like every write.
func (s *Session) SetACL(ctx context.Context, path string, acl []ACL, version int32) (*Stat, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	var resp wire.SetACLResponse
	_, err := call(s, ctx, func(ctx context.Context) (zkconn.Reply, error) {
		return s.conn.Do(ctx, wire.OpSetACL, &wire.SetACLRequest{Path: s.root.add(path), ACL: wireACL(acl), Version: version}, &resp)
	})
	if err != nil {
		return nil, wrapPath(err, "set acl", path)
	}
	return statOf(resp.Stat), nil
}
