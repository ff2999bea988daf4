package zkcoord

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// A follower answers pings and reads itself and renews a session at the
// leader only in its replies to the leader's pings (every tickTime/2).
// Cut off from the leader, it goes on answering for up to
// syncLimit × tickTime before it drops its clients, while the leader,
// hearing nothing, expires the session a timeout after the last renewal it
// received. A Session on that follower keeps seeing replies, so it declares
// itself Lost only LostAfter × T after the follower gave up: after the
// server's expiry unless
//
//	syncLimit × tickTime + tickTime/2 + heartbeat < (1 − LostAfter) × T
//
// where heartbeat is the longest quiet after which the Session asks for a
// reply. Neither sync nor a write proves more: the leader renews sessions
// only from ping replies and reconnects (docs/protocol.md).

// ensembleRisk returns how long after the leader's last renewal a Session
// on a cut-off follower may still hear replies (worst), and how long its
// Lost threshold leaves before the leader can expire the session (room).
// The Session is safe when worst < room.
func ensembleRisk(tick time.Duration, syncLimit int, timeout time.Duration, lostAfter float64) (worst, room time.Duration) {
	worst = time.Duration(syncLimit)*tick + tick/2 + heartbeatEvery(timeout, lostAfter)
	room = timeout - time.Duration(float64(timeout)*lostAfter)
	return worst, room
}

// checkEnsemble reads the server's tickTime and syncLimit with the conf
// four-letter word and logs a warning when a follower cut off from the
// leader could let this Session declare itself Lost only after the leader
// expired it. Servers often refuse four-letter words; that is logged at
// debug level and otherwise ignored.
func (s *Session) checkEnsemble(addr string) {
	if s.alive() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	conf, err := s.fourLetter(ctx, addr, "conf")
	if err != nil {
		s.log.Debug("zookeeper ensemble timing not checked", "server", addr, "err", err)
		return
	}
	tick, syncLimit, ok := parseConf(conf)
	if !ok {
		s.log.Debug("zookeeper ensemble timing not checked: no tickTime and syncLimit (standalone, or conf refused)", "server", addr)
		return
	}
	worst, room := ensembleRisk(tick, syncLimit, s.Timeout(), s.cfg.LostAfter)
	attrs := []any{"server", addr, "tickTime", tick, "syncLimit", syncLimit,
		"sessionTimeout", s.Timeout(), "lostAfter", s.cfg.LostAfter,
		"followerMayAnswerFor", worst, "marginBeforeExpiry", room}
	if worst >= room {
		s.log.Warn("zkcoord: a follower cut off from the ZooKeeper leader may keep this session answered "+
			"until after the leader expires it, so Lost may come too late for owners to stop in time; "+
			"raise the session timeout, lower LostAfter, or lower syncLimit×tickTime", attrs...)
		return
	}
	s.log.Debug("zookeeper ensemble timing leaves Lost before expiry", attrs...)
}

// FourLetter sends one of ZooKeeper's four-letter words (such as "mntr",
// "conf", "srvr", "cons", "ruok") to server, or to the server the Session
// last used if server is "", through the Session's dialer and TLS, and
// returns the reply. A server answers only the words its
// 4lw.commands.whitelist allows; others get a short refusal text.
func (s *Session) FourLetter(ctx context.Context, server, word string) (string, error) {
	if len(word) != 4 || strings.Trim(word, "abcdefghijklmnopqrstuvwxyz") != "" {
		return "", fmt.Errorf("zkcoord: %q is not a four-letter word", word)
	}
	if server == "" {
		server = s.Server()
	}
	reply, err := s.fourLetter(ctx, server, word)
	if err != nil {
		return "", fmt.Errorf("zkcoord: %s to %s: %w", word, server, err)
	}
	return reply, nil
}

// fourLetter sends a four-letter word through the Session's dialer (and
// TLS) and returns the reply.
func (s *Session) fourLetter(ctx context.Context, addr, cmd string) (string, error) {
	c, err := s.dial(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 1<<16))
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// parseConf finds tickTime (ms) and syncLimit (ticks) in a conf reply; ok
// is false if either is missing, as on a standalone server.
func parseConf(conf string) (tick time.Duration, syncLimit int, ok bool) {
	var haveTick, haveSync bool
	sc := bufio.NewScanner(strings.NewReader(conf))
	for sc.Scan() {
		k, v, found := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !found {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			continue
		}
		switch strings.TrimSpace(k) {
		case "tickTime":
			tick, haveTick = time.Duration(n)*time.Millisecond, true
		case "syncLimit":
			syncLimit, haveSync = n, true
		}
	}
	return tick, syncLimit, haveTick && haveSync
}
