package zkcoord

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// Following the ensemble's membership, as Curator's EnsembleTracker does.
//
// After Connect the Session reads ConfigNode once. It follows the
// configuration when the members have client addresses and the server it
// is connected to is one of them (the same host and port, or host names
// that resolve to a common address with the same port): then its Servers
// were the ensemble's own addresses, not a load balancer's or a proxy's.
// From then on it keeps a data watch on ConfigNode (re-armed on every
// reconnection, like every watch of the Session) and, on every new
// version, replaces the connection's server list with the members' client
// addresses. The connection stays where it is while its server is a
// member; a connection to a server that left is dropped and the session
// re-attaches to a member (see zkconn.Client.SetServers).

// followEnsemble is the goroutine that follows ConfigNode until the
// Session ends.
func (s *Session) followEnsemble() {
	cfg, _, err := s.readEnsemble(false)
	if err != nil {
		if s.alive() == nil {
			s.log.Debug("zookeeper ensemble configuration not followed", "err", err)
		}
		return
	}
	servers := cfg.Servers()
	if len(servers) == 0 {
		s.log.Debug("zookeeper ensemble configuration not followed: it lists no client addresses (standalone, or static membership without them)",
			"config", cfg.String())
		return
	}
	current := s.Server()
	if s.memberIndex(servers, current) < 0 {
		s.log.Info("zookeeper ensemble configuration not followed: the server connected to is not among its members "+
			"(a load balancer or proxy?); keeping the servers as given",
			"server", current, "members", servers)
		return
	}
	applied := int64(-1)
	for {
		cfg, w, err := s.readEnsemble(true)
		if err != nil {
			if s.alive() == nil {
				s.log.Warn("zkcoord: stopped following the ZooKeeper ensemble configuration", "err", err)
			}
			return
		}
		if cfg.Version != applied {
			s.applyEnsemble(cfg)
			applied = cfg.Version
		}
		if !s.waitChanged(w) {
			return
		}
	}
}

// readEnsemble reads and parses ConfigNode, with a watch if watch is set.
// A text that does not parse is an error: the servers are left as they
// are, rather than set from a guess.
func (s *Session) readEnsemble(watch bool) (EnsembleConfig, *zkconn.Watch, error) {
	type read struct {
		data []byte
		w    *zkconn.Watch
	}
	r, err := retryCall(s, s.ctx, func(ctx context.Context) (read, error) {
		resp, _, w, err := s.conn.GetData(ctx, ConfigNode, watch)
		return read{resp.Data, w}, err
	})
	if err != nil {
		return EnsembleConfig{}, nil, wrapPath(err, "get", ConfigNode)
	}
	cfg, err := ParseEnsembleConfig(string(r.data))
	if err != nil && r.w != nil {
		s.conn.Forget(r.w)
	}
	return cfg, r.w, err
}

// applyEnsemble makes the members' client addresses the Session's servers.
// The member the Session is connected to keeps the address it was reached
// by, so that the connection stays.
func (s *Session) applyEnsemble(cfg EnsembleConfig) {
	servers := cfg.Servers()
	if len(servers) == 0 {
		s.log.Warn("zkcoord: the ZooKeeper ensemble configuration lists no client addresses; keeping the servers",
			"version", fmt.Sprintf("%x", cfg.Version), "config", cfg.String())
		return
	}
	current := s.Server()
	if i := s.memberIndex(servers, current); i >= 0 {
		servers[i] = current
	}
	before := s.conn.Servers()
	if sameServers(before, servers) {
		return
	}
	dropped, err := s.conn.SetServers(servers)
	if err != nil {
		return // not reached: servers is not empty
	}
	attrs := []any{"version", fmt.Sprintf("%x", cfg.Version), "servers", servers, "before", before}
	if dropped {
		attrs = append(attrs, "left", current)
	}
	s.log.Info("zookeeper ensemble membership changed; following it", attrs...)
}

// waitChanged waits until the watch on ConfigNode fires; false when the
// Session ended first.
func (s *Session) waitChanged(w *zkconn.Watch) bool {
	for {
		select {
		case <-w.Ready():
			for ev, ok := w.TryNext(); ok; ev, ok = w.TryNext() {
				switch {
				case ev.Type != wire.EventNone:
					return true
				case ev.State != wire.StateDisconnected && ev.State != wire.StateSyncConnected:
					return false // the connection has ended
				}
			}
		case <-s.done:
			return false
		}
	}
}

// memberIndex returns the index of the member that is server, or -1.
func (s *Session) memberIndex(members []string, server string) int {
	if i := slices.Index(members, server); i >= 0 || server == "" {
		return i
	}
	host, port, err := net.SplitHostPort(server)
	if err != nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
	defer cancel()
	mine, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return -1
	}
	for i, m := range members {
		mhost, mport, err := net.SplitHostPort(m)
		if err != nil || mport != port {
			continue
		}
		theirs, err := net.DefaultResolver.LookupHost(ctx, mhost)
		if err == nil && slices.ContainsFunc(theirs, func(a string) bool { return slices.Contains(mine, a) }) {
			return i
		}
	}
	return -1
}

// sameServers reports whether a and b hold the same servers in any order.
func sameServers(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
