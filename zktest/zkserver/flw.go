package zkserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ErrNotServing is returned (wrapped) by the parsed four-letter-word helpers
// when the server answers that it is not currently serving requests, as an
// ensemble member without a quorum does.
var ErrNotServing = errors.New("zkserver: server is not currently serving requests")

// defaultFLWTimeout applies to four-letter-word requests whose context has no
// deadline.
const defaultFLWTimeout = 5 * time.Second

// FourLetter sends a four-letter-word command (e.g. "srvr", "mntr", "cons",
// "wchc", "ruok") to the server's plain client port and returns the raw
// reply. Without a deadline on ctx it gives up after 5s.
func (s *Server) FourLetter(ctx context.Context, cmd string) (string, error) {
	return FourLetter(ctx, s.Addr(), cmd)
}

// FourLetter sends a four-letter-word command to the ZooKeeper server (or
// proxy) at addr and returns the raw reply. Without a deadline on ctx it
// gives up after 5s.
func FourLetter(ctx context.Context, addr, cmd string) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zkserver: four-letter word %q is not four letters", cmd)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultFLWTimeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("zkserver: %s %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("zkserver: %s %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return "", fmt.Errorf("zkserver: %s %s: %w", cmd, addr, err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("zkserver: %s %s: empty reply", cmd, addr)
	}
	return string(b), nil
}

func checkServing(cmd, addr, reply string) error {
	if strings.Contains(reply, "not currently serving requests") {
		return fmt.Errorf("%w (%s %s)", ErrNotServing, cmd, addr)
	}
	if strings.Contains(reply, "is not executed because it is not in the whitelist") {
		return fmt.Errorf("zkserver: %s %s: %s", cmd, addr, strings.TrimSpace(reply))
	}
	return nil
}

// Srvr returns the srvr reply parsed into its "Key: value" lines, e.g.
// "Mode" (leader, follower, standalone), "Zxid", "Node count",
// "Connections".
func (s *Server) Srvr(ctx context.Context) (map[string]string, error) {
	reply, err := s.ask(ctx, "srvr")
	if err != nil {
		return nil, err
	}
	m := keyValues(reply, ":")
	if m["Mode"] == "" {
		return nil, fmt.Errorf("zkserver: srvr %s: no Mode in reply %q", s.Addr(), reply)
	}
	return m, nil
}

// Mntr returns the mntr reply parsed into its tab-separated key/value lines,
// e.g. "zk_server_state", "zk_watch_count", "zk_num_alive_connections".
func (s *Server) Mntr(ctx context.Context) (map[string]string, error) {
	reply, err := s.ask(ctx, "mntr")
	if err != nil {
		return nil, err
	}
	return keyValues(reply, "\t"), nil
}

// keyValues parses the lines of reply that hold a key and a value
// separated by sep, both trimmed.
func keyValues(reply, sep string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(reply))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), sep)
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// ask sends the four-letter word cmd and returns the reply, or an error if
// the server does not serve or does not allow cmd.
func (s *Server) ask(ctx context.Context, cmd string) (string, error) {
	reply, err := s.FourLetter(ctx, cmd)
	if err != nil {
		return "", err
	}
	if err := checkServing(cmd, s.Addr(), reply); err != nil {
		return "", err
	}
	return reply, nil
}

// Cons returns the raw cons reply: one line per client connection.
func (s *Server) Cons(ctx context.Context) (string, error) {
	return s.ask(ctx, "cons")
}

// Wchc returns the data watches (set by get and exists) held by this server,
// by session: session id -> watched paths. ZooKeeper's wchc does not list
// child watches; WatchCount counts both kinds. Sessions without data watches
// are absent.
func (s *Server) Wchc(ctx context.Context) (map[int64][]string, error) {
	reply, err := s.ask(ctx, "wchc")
	if err != nil {
		return nil, err
	}
	return parseWchc(reply)
}

func parseWchc(reply string) (map[int64][]string, error) {
	m := map[int64][]string{}
	var cur int64
	have := false
	sc := bufio.NewScanner(strings.NewReader(reply))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
		case line[0] == '\t' || line[0] == ' ':
			if !have {
				return nil, fmt.Errorf("zkserver: wchc: path before session id in %q", reply)
			}
			m[cur] = append(m[cur], strings.TrimSpace(line))
		default:
			id, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(line), "0x"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("zkserver: wchc: bad session id line %q", line)
			}
			cur, have = int64(id), true
			if _, ok := m[cur]; !ok {
				m[cur] = nil
			}
		}
	}
	return m, nil
}

// WatchCount returns zk_watch_count from mntr: the number of watches this
// server holds (a path watched by several sessions counts once per session).
func (s *Server) WatchCount(ctx context.Context) (int, error) {
	m, err := s.Mntr(ctx)
	if err != nil {
		return 0, err
	}
	v, ok := m["zk_watch_count"]
	if !ok {
		return 0, fmt.Errorf("zkserver: mntr %s: no zk_watch_count", s.Addr())
	}
	return strconv.Atoi(v)
}
