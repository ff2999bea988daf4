package zkserver

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SuperAuth is the digest credential ("user:password") of the super user
// of a cluster started WithReconfig. ZooKeeper lets only a client allowed
// to write /zookeeper/config change the membership, and that node is
// read-only to everyone else; add it to a session (digest scheme) that is
// to call reconfig.
const SuperAuth = "super:zkserver-reconfig"

// WithReconfig runs the servers as an ensemble with dynamic
// reconfiguration (reconfigEnabled=true): each server's membership lives
// in a dynamic configuration file whose lines carry the client address
// ("server.1=127.0.0.1:peer:election:participant;127.0.0.1:client"), the
// servers publish it in /zookeeper/config, and a client authenticated as
// SuperAuth may change it with a reconfig request. AddServer and
// RemoveServer grow and shrink the ensemble that way. A single server runs
// as a one-member ensemble (see WithQuorumMode). It cannot be combined
// with WithPeerAddr.
func WithReconfig() Option {
	return func(o *options) { o.reconfig, o.quorum = true, true }
}

// superDigest is ZooKeeper's digest of SuperAuth: base64(SHA-1(user:password)).
func superDigest() string {
	sum := sha1.Sum([]byte(SuperAuth))
	user, _, _ := strings.Cut(SuperAuth, ":")
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// Line returns the server's line of an ensemble's dynamic configuration,
// "server.<id>=127.0.0.1:<peer>:<election>:<role>;127.0.0.1:<client>", as
// a reconfig request names a joining server.
func (s *Server) Line() string {
	role := "participant"
	if s.observer {
		role = "observer"
	}
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:%s;%s", s.id, s.peerPort, s.electionPort, role, s.Addr())
}

// Removed reports whether RemoveServer took the server out of the ensemble.
func (s *Server) Removed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removed
}

// writeDynamicConfig adds to the static configuration b what dynamic
// reconfiguration needs and writes the dynamic file with the lines of
// members, and myid.
func (s *Server) writeDynamicConfig(b *strings.Builder, members []*Server) error {
	if s.cluster.opts.peerAddr != nil {
		return errors.New("zkserver: WithReconfig cannot be combined with WithPeerAddr")
	}
	dynamic := filepath.Join(s.dir, "zoo.cfg.dynamic")
	fmt.Fprintf(b, "reconfigEnabled=true\ndynamicConfigFile=%s\n", dynamic)
	fmt.Fprintf(b, "DigestAuthenticationProvider.superDigest=%s\n", superDigest())
	var lines strings.Builder
	for _, m := range members {
		lines.WriteString(m.Line() + "\n")
	}
	if err := os.WriteFile(dynamic, []byte(lines.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, "data", "myid"), []byte(itoa(s.id)+"\n"), 0o644)
}

// members returns the servers that are members of the ensemble (not
// removed), running or not.
func (c *Cluster) members() int {
	n := 0
	for _, s := range c.all() {
		if !s.Removed() {
			n++
		}
	}
	return n
}

// AddServer starts a new server and adds it to an ensemble started
// WithReconfig: the server starts with the current members and itself in
// its configuration, follows the leader without a vote, and joins through
// a reconfig request (incremental, "joining"). With observer it joins as
// an observer, otherwise as a voting participant. It returns once the
// reconfiguration is committed and the ensemble serves; the server is
// Server(Len()-1) and its id the largest yet. On an error the new server
// may be running and not a member; Close kills it with the rest.
func (c *Cluster) AddServer(ctx context.Context, observer bool) (*Server, error) {
	if !c.opts.reconfig || c.opts.tls {
		return nil, errors.New("zkserver: AddServer needs a cluster started WithReconfig and without WithTLS")
	}
	ports, err := allocPorts(3)
	if err != nil {
		return nil, err
	}
	all := c.all()
	var members []*Server
	id := 0
	for _, m := range all {
		id = max(id, m.id)
		if !m.Removed() {
			members = append(members, m)
		}
	}
	ref := all[0]
	s := &Server{
		cluster:      c,
		index:        len(all),
		id:           id + 1,
		java:         ref.java,
		classpath:    ref.classpath,
		clientPort:   ports[0],
		peerPort:     ports[1],
		electionPort: ports[2],
		observer:     observer,
		dir:          filepath.Join(c.dir, fmt.Sprintf("added%d", len(all))),
	}
	if err := s.writeConfig(append(members, s), c.opts); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	c.servers = append(c.servers, s)
	c.mu.Unlock()
	if err := s.launch(); err != nil {
		return nil, err
	}
	if err := s.waitAnswering(ctx); err != nil {
		return nil, err
	}
	if _, err := c.Reconfig(ctx, s.Line(), ""); err != nil {
		return nil, err
	}
	return s, c.WaitReady(ctx)
}

// RemoveServer takes server i out of an ensemble started WithReconfig
// through a reconfig request (incremental, "leaving"), sent to another
// member, and then stops its process. It returns once the ensemble serves
// without it. Removing the leader is allowed: the ensemble elects another.
func (c *Cluster) RemoveServer(ctx context.Context, i int) error {
	if !c.opts.reconfig {
		return errors.New("zkserver: RemoveServer needs a cluster started WithReconfig")
	}
	s := c.Server(i)
	if _, err := c.Reconfig(ctx, "", itoa(s.id)); err != nil {
		return err
	}
	s.mu.Lock()
	s.removed = true
	s.mu.Unlock()
	if err := s.Stop(); err != nil {
		return err
	}
	return c.WaitReady(ctx)
}

// Reconfig sends an incremental reconfig request as SuperAuth to a
// running member: joining is a comma-separated list of server lines (see
// Server.Line), leaving one of server ids; either may be empty. It returns
// the new configuration ZooKeeper answers with (the text /zookeeper/config
// then holds). A reconfiguration in progress, or one whose new quorum is
// not yet connected to the leader, is tried again until ctx ends.
func (c *Cluster) Reconfig(ctx context.Context, joining, leaving string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
	}
	var last error
	for {
		for _, s := range c.all() {
			if !s.Running() || s.Paused() || s.Removed() || s.observer {
				continue
			}
			if leaving == itoa(s.id) {
				continue // a server leaving may stop answering mid-way
			}
			cfg, code, err := reconfigVia(ctx, s.Addr(), joining, leaving)
			switch {
			case err == nil && code == 0:
				return cfg, nil
			case err == nil && code != codeReconfigInProgress && code != codeNewConfigNoQuorum:
				return "", fmt.Errorf("zkserver: reconfig (joining %q, leaving %q): ZooKeeper error code %d", joining, leaving, code)
			case err == nil:
				last = fmt.Errorf("ZooKeeper error code %d", code)
			default:
				last = err
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("zkserver: reconfig (joining %q, leaving %q): %w (%v)", joining, leaving, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

// ZooKeeper's codes for a reconfiguration that cannot be applied now.
const (
	codeNewConfigNoQuorum  = -13
	codeReconfigInProgress = -14
)

const (
	opAuth     = 100
	opReconfig = 16
	xidAuth    = -4
	xidReq     = 1
)

// reconfigVia opens a session on addr, authenticates as SuperAuth, sends
// the reconfig request and closes the session. It returns the new
// configuration or the server's error code.
func reconfigVia(ctx context.Context, addr, joining, leaving string) (config string, code int32, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", 0, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var b bytes.Buffer
	put := func(v any) { _ = binary.Write(&b, binary.BigEndian, v) }
	putString := func(s string, null bool) {
		if null {
			put(int32(-1))
			return
		}
		put(int32(len(s)))
		b.WriteString(s)
	}
	frame := func() error {
		err := writeFrame(conn, b.Bytes())
		b.Reset()
		return err
	}
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd, readOnly.
	put(int32(0))
	put(int64(0))
	put(int32(10000))
	put(int64(0))
	putString(string(make([]byte, 16)), false)
	put(false)
	if err := frame(); err != nil {
		return "", 0, err
	}
	if _, err := readFrame(conn); err != nil {
		return "", 0, fmt.Errorf("%s: connect: %w", addr, err)
	}
	// AuthPacket after its header: type, scheme, auth.
	put(int32(xidAuth))
	put(int32(opAuth))
	put(int32(0))
	putString("digest", false)
	putString(SuperAuth, false)
	if err := frame(); err != nil {
		return "", 0, err
	}
	// ReconfigRequest: joiningServers, leavingServers, newMembers (null
	// for an incremental change), curConfigId (-1: any).
	put(int32(xidReq))
	put(int32(opReconfig))
	putString(joining, joining == "")
	putString(leaving, leaving == "")
	putString("", true)
	put(int64(-1))
	if err := frame(); err != nil {
		return "", 0, err
	}
	for {
		reply, err := readFrame(conn)
		if err != nil {
			return "", 0, fmt.Errorf("%s: reconfig: %w", addr, err)
		}
		// ReplyHeader: xid, zxid, err.
		if len(reply) < 16 {
			return "", 0, fmt.Errorf("zkserver: short reply (%d bytes)", len(reply))
		}
		xid := int32(binary.BigEndian.Uint32(reply[0:4]))
		code := int32(binary.BigEndian.Uint32(reply[12:16]))
		switch {
		case xid == xidAuth && code != 0:
			return "", 0, fmt.Errorf("zkserver: %s refused the super user (code %d)", addr, code)
		case xid != xidReq:
			continue
		case code != 0:
			return "", code, nil
		}
		// End the session at once rather than leave it to expire.
		put(int32(xidReq + 1))
		put(int32(opCloseSession))
		_ = frame()
		// GetDataResponse: data, stat.
		body := reply[16:]
		if len(body) < 4 {
			return "", 0, fmt.Errorf("zkserver: short reconfig reply (%d bytes)", len(reply))
		}
		n := int(int32(binary.BigEndian.Uint32(body)))
		if n < 0 || n > len(body)-4 {
			return "", 0, fmt.Errorf("zkserver: bad reconfig reply")
		}
		return string(body[4 : 4+n]), 0, nil
	}
}
