package zkcoord

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// Identity is one identity the server knows the session by (WhoAmI): an
// authentication scheme and the user in it, such as "ip" and the client's
// address, or "digest" and a user name.
type Identity struct {
	Scheme string
	User   string
}

// WhoAmI asks the server which identities the session has (ZooKeeper 3.7
// and later). Like every read it is retried on connection loss.
func (s *Session) WhoAmI(ctx context.Context) ([]Identity, error) {
	var resp wire.WhoAmIResponse
	if err := s.read(ctx, "whoami", "/", wire.OpWhoAmI, nil, &resp); err != nil {
		return nil, err
	}
	out := make([]Identity, len(resp.ClientInfo))
	for i, c := range resp.ClientInfo {
		out[i] = Identity{Scheme: c.AuthScheme, User: c.User}
	}
	return out, nil
}

// Ephemerals lists the paths of the session's ephemeral nodes whose paths
// start with prefix ("/" for all), relative to the chroot (ZooKeeper 3.6
// and later). prefix is a path prefix, not necessarily a node.
func (s *Session) Ephemerals(ctx context.Context, prefix string) ([]string, error) {
	if !strings.HasPrefix(prefix, "/") {
		return nil, fmt.Errorf("%w: prefix %q must start with /", ErrInvalidPath, prefix)
	}
	var resp wire.GetEphemeralsResponse
	req := &wire.GetEphemeralsRequest{PrefixPath: s.root.add(prefix)}
	if err := s.read(ctx, "ephemerals", prefix, wire.OpGetEphemerals, req, &resp); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp.Ephemerals))
	for _, p := range resp.Ephemerals {
		if s.root != "" && p != string(s.root) && !strings.HasPrefix(p, string(s.root)+"/") {
			continue // outside the chroot
		}
		out = append(out, s.root.strip(p))
	}
	return out, nil
}

// CountDescendants returns how many nodes lie below path, at any depth
// (getAllChildrenNumber, ZooKeeper 3.6 and later).
func (s *Session) CountDescendants(ctx context.Context, path string) (int, error) {
	if err := ValidatePath(path); err != nil {
		return 0, err
	}
	var resp wire.GetAllChildrenNumberResponse
	if err := s.read(ctx, "count", path, wire.OpGetAllChildrenNumber, &wire.GetAllChildrenNumberRequest{Path: s.root.add(path)}, &resp); err != nil {
		return 0, err
	}
	return int(resp.TotalNumber), nil
}

// read sends an idempotent request, retried on connection loss.
func (s *Session) read(ctx context.Context, what, path string, op wire.OpCode, req wire.Encodable, resp wire.Decodable) error {
	_, err := retryCall(s, ctx, func(ctx context.Context) (struct{}, error) {
		_, err := s.conn.Do(ctx, op, req, resp)
		return struct{}{}, err
	})
	return wrapPath(err, what, path)
}
