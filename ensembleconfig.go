package zkcoord

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// ConfigNode is where a ZooKeeper ensemble (3.5 and later) publishes its
// membership. It lies outside any chroot: the Session reads it at this
// path whatever Config.Chroot is. Everyone may read it; only a client with
// write permission on it (a super user by default) may reconfigure.
const ConfigNode = "/zookeeper/config"

// ZooKeeper's refusals of a reconfiguration. Reconfig returns them
// wrapped; check with errors.Is.
var (
	// ErrReconfigDisabled: the ensemble runs without reconfigEnabled, or
	// is a standalone server.
	ErrReconfigDisabled error = wire.ErrReconfigDisabled
	// ErrNewConfigNoQuorum: no quorum of the new membership is connected
	// to the leader and in sync (a joining server that has not caught up).
	ErrNewConfigNoQuorum error = wire.ErrNewConfigNoQuorum
	// ErrReconfigInProgress: another reconfiguration is being committed.
	ErrReconfigInProgress error = wire.ErrReconfigInProgress
)

// EnsembleConfig is an ensemble's membership as ZooKeeper publishes it in
// ConfigNode: lines "server.<id>=<host>:<quorum port>:<election
// port>[:<role>][;[<client host>:]<client port>]" and a last line
// "version=<hex>".
type EnsembleConfig struct {
	// Version is the configuration's version (the zxid that committed
	// it), 0 when the text names none.
	Version int64
	// Members are the servers, in the order listed.
	Members []EnsembleMember
}

// EnsembleMember is one server of an EnsembleConfig.
type EnsembleMember struct {
	ID int64
	// Role is "participant" (a voting member) or "observer".
	Role string
	// QuorumAddr and ElectionAddr are the "host:port" addresses the
	// servers talk to each other on.
	QuorumAddr   string
	ElectionAddr string
	// ClientAddr is the "host:port" clients connect to. A member listed
	// without a client host, or with a wildcard one (0.0.0.0, ::), listens
	// on every interface: its quorum host is given. It is "" when the line
	// has no client port at all.
	ClientAddr string
}

// Servers returns the members' client addresses, for Config.Servers; nil
// when a member has none (a configuration without client ports tells no
// client where to go).
func (c EnsembleConfig) Servers() []string {
	out := make([]string, 0, len(c.Members))
	for _, m := range c.Members {
		if m.ClientAddr == "" {
			return nil
		}
		out = append(out, m.ClientAddr)
	}
	return out
}

// String returns the configuration as ZooKeeper writes it.
func (c EnsembleConfig) String() string {
	var b strings.Builder
	for _, m := range c.Members {
		b.WriteString(m.String() + "\n")
	}
	fmt.Fprintf(&b, "version=%x", c.Version)
	return b.String()
}

// String returns the member's line, as a reconfiguration names a joining
// server.
func (m EnsembleMember) String() string {
	s := fmt.Sprintf("server.%d=%s:%s:%s", m.ID, m.QuorumAddr, port(m.ElectionAddr), m.Role)
	if m.ClientAddr != "" {
		s += ";" + m.ClientAddr
	}
	return s
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// ParseEnsembleConfig reads the text of ConfigNode. Empty text (a
// standalone server) gives no members; lines other than server.N and
// version are ignored, as ZooKeeper's own client ignores them.
func ParseEnsembleConfig(text string) (EnsembleConfig, error) {
	var c EnsembleConfig
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		key, value, ok := strings.Cut(line, "=")
		switch {
		case !ok:
		case key == "version":
			v, err := strconv.ParseInt(value, 16, 64)
			if err != nil {
				return EnsembleConfig{}, fmt.Errorf("%w: ensemble config: version %q is not hexadecimal", ErrBadData, value)
			}
			c.Version = v
		case strings.HasPrefix(key, "server."):
			m, err := parseMember(key, value)
			if err != nil {
				return EnsembleConfig{}, fmt.Errorf("%w: ensemble config: %q: %w", ErrBadData, line, err)
			}
			c.Members = append(c.Members, m)
		}
	}
	return c, nil
}

// parseMember reads "server.<id>" = "<host>:<port>:<port>[:<role>][;[<host>:]<port>]".
func parseMember(key, value string) (EnsembleMember, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(key, "server."), 10, 64)
	if err != nil || id < 0 {
		return EnsembleMember{}, fmt.Errorf("server id %q is not a number", strings.TrimPrefix(key, "server."))
	}
	m := EnsembleMember{ID: id, Role: "participant"}
	quorum, client, hasClient := strings.Cut(value, ";")
	host, rest, err := splitHost(quorum)
	if err != nil {
		return m, err
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 || !isPort(parts[0]) || !isPort(parts[1]) {
		return m, fmt.Errorf("want host:quorumPort:electionPort[:role]")
	}
	m.QuorumAddr = net.JoinHostPort(host, parts[0])
	m.ElectionAddr = net.JoinHostPort(host, parts[1])
	if len(parts) == 3 {
		switch parts[2] {
		case "participant", "observer":
			m.Role = parts[2]
		default:
			return m, fmt.Errorf("role %q: want participant or observer", parts[2])
		}
	}
	if !hasClient {
		return m, nil
	}
	chost, cport := "", client
	if strings.Contains(client, ":") {
		var rest string
		if chost, rest, err = splitHost(client); err != nil {
			return m, err
		}
		cport = rest
	}
	if !isPort(cport) {
		return m, fmt.Errorf("client port %q is not a port", cport)
	}
	if ip := net.ParseIP(chost); chost == "" || ip != nil && ip.IsUnspecified() {
		chost = host
	}
	m.ClientAddr = net.JoinHostPort(chost, cport)
	return m, nil
}

// splitHost splits "host:rest" or "[ipv6]:rest" at the host's end.
func splitHost(s string) (host, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 || net.ParseIP(s[1:end]) == nil {
			return "", "", fmt.Errorf("address %q: want [IPv6 address]:port", s)
		}
		return s[1:end], s[end+2:], nil
	}
	host, rest, ok := strings.Cut(s, ":")
	if !ok || host == "" || strings.ContainsAny(host, "[]/;,= \t") {
		return "", "", fmt.Errorf("address %q: want host:port", s)
	}
	return host, rest, nil
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 1<<16
}

// EnsembleConfig reads the ensemble's membership from ConfigNode (outside
// the chroot). A standalone server gives an empty configuration. Like
// every read it is retried on connection loss.
func (s *Session) EnsembleConfig(ctx context.Context) (EnsembleConfig, error) {
	resp, err := retryCall(s, ctx, func(ctx context.Context) (wire.GetDataResponse, error) {
		resp, _, _, err := s.conn.GetData(ctx, ConfigNode, false)
		return resp, err
	})
	if err != nil {
		return EnsembleConfig{}, wrapPath(err, "get", ConfigNode)
	}
	return ParseEnsembleConfig(string(resp.Data))
}

// Servers returns the servers the Session connects to, in the order it
// tries them: Config.Servers, until it follows a configuration of the
// ensemble (see Config.PinServers).
func (s *Session) Servers() []string { return s.conn.Servers() }

// Reconfig is a change of an ensemble's membership (Session.Reconfig).
// Either Joining and Leaving (an incremental change), or Members (the
// whole new membership).
type Reconfig struct {
	// Joining are servers to add or to change, each a member line
	// ("server.4=zk-3:2888:3888:participant;2181"; see EnsembleMember).
	Joining []string
	// Leaving are the ids of servers to remove.
	Leaving []int64
	// Members, if set, is the whole new membership, in member lines.
	Members []string
	// FromVersion, if not 0, applies the change only to the configuration
	// of that version (EnsembleConfig.Version), failing with
	// ErrBadVersion when the ensemble has moved on.
	FromVersion int64
}

// Reconfig changes the ensemble's membership (ZooKeeper's reconfig,
// servers 3.5 and later started with reconfigEnabled=true) and returns
// the new configuration. The session needs write permission on
// ConfigNode, which ZooKeeper grants to a super user only, unless the
// servers skip ACLs. The ensemble refuses with ErrReconfigDisabled,
// ErrNewConfigNoQuorum (retry once the new servers have caught up),
// ErrReconfigInProgress or ErrNoAuth. A reconfiguration is not repeated on
// connection loss: the error then wraps ErrConnectionClosed, and
// EnsembleConfig tells whether it happened.
func (s *Session) Reconfig(ctx context.Context, r Reconfig) (EnsembleConfig, error) {
	req, err := r.request()
	if err != nil {
		return EnsembleConfig{}, err
	}
	resp, err := call(s, ctx, func(ctx context.Context) (wire.GetDataResponse, error) {
		var resp wire.GetDataResponse
		_, err := s.conn.Do(ctx, wire.OpReconfig, req, &resp)
		return resp, err
	})
	if err != nil {
		return EnsembleConfig{}, fmt.Errorf("zkcoord: reconfig: %w", err)
	}
	return ParseEnsembleConfig(string(resp.Data))
}

// request checks the change and builds its record.
func (r Reconfig) request() (*wire.ReconfigRequest, error) {
	incremental := len(r.Joining) > 0 || len(r.Leaving) > 0
	if incremental == (len(r.Members) > 0) {
		return nil, fmt.Errorf("%w: reconfig: give Joining and Leaving, or Members", ErrBadArguments)
	}
	for _, l := range slices.Concat(r.Joining, r.Members) {
		key, value, _ := strings.Cut(l, "=")
		if _, err := parseMember(key, value); err != nil || !strings.HasPrefix(key, "server.") {
			return nil, fmt.Errorf("%w: reconfig: server line %q: want server.<id>=<host>:<port>:<port>[:<role>][;[<host>:]<port>]", ErrBadArguments, l)
		}
	}
	leaving := make([]string, len(r.Leaving))
	for i, id := range r.Leaving {
		leaving[i] = strconv.FormatInt(id, 10)
	}
	req := &wire.ReconfigRequest{
		JoiningServers: strings.Join(r.Joining, ","),
		LeavingServers: strings.Join(leaving, ","),
		NewMembers:     strings.Join(r.Members, ","),
		CurConfigID:    -1,
	}
	if r.FromVersion != 0 {
		req.CurConfigID = r.FromVersion
	}
	return req, nil
}
