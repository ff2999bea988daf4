//go:build bench

package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord/zktest"
)

// A setting is where a part of the run happens: on loopback against one
// standalone server, or deployed-like, against a 3-server ensemble with
// fsync on, every client behind a proxy that delays each direction.
type setting struct {
	id      string        // "" for loopback; otherwise the one-way delay, e.g. "1ms"
	delay   time.Duration // one-way delay added by each client's proxy
	cluster *zktest.Cluster
}

// name is how reports call the setting.
func (s *setting) name() string {
	if s.loopback() {
		return "loopback"
	}
	return fmt.Sprintf("%g ms one-way", float64(s.delay)/float64(time.Millisecond))
}

// loopback is the setting of the classic suites.
func (s *setting) loopback() bool { return s.delay == 0 }

// rtt is the round-trip time the proxies add.
func (s *setting) rtt() time.Duration { return 2 * s.delay }

// metric names a metric in this setting: the loopback ids stay as they
// were; the others carry the setting, "lock@1ms".
func (s *setting) metric(base string) string {
	if s.loopback() {
		return base
	}
	return base + "@" + s.id
}

// settingOf splits a metric id into its base and setting id.
func settingOf(id string) (base, set string) {
	base, set, _ = strings.Cut(id, "@")
	return base, set
}

// delayedSettings are the deployed-like settings: a rack (0.25 ms each
// way) and zones apart (1 ms each way).
var delayedDelays = []time.Duration{250 * time.Microsecond, time.Millisecond}

func delayID(d time.Duration) string {
	return fmt.Sprintf("%gms", float64(d)/float64(time.Millisecond))
}

// active is the setting being measured; the suites of one setting run
// one after the other, never at once with another setting's.
var active *setting

// server is the cluster of the active setting.
var server *zktest.Cluster

func activate(s *setting) {
	active, server = s, s.cluster
}

// clientServers returns the addresses a new client connects to: the
// servers themselves on loopback, otherwise a proxy of its own that
// delays each direction.
func clientServers() ([]string, error) {
	if active.loopback() {
		return server.Servers(), nil
	}
	p, err := server.OpenProxy()
	if err != nil {
		return nil, err
	}
	if err := p.Delay(active.delay); err != nil {
		p.Close()
		return nil, err
	}
	return p.Servers(), nil
}

// launchEnsemble starts the deployed-like cluster: three servers that
// sync their log to disk before acknowledging a write.
func launchEnsemble() (*zktest.Cluster, error) {
	return zktest.Launch(zktest.WithServers(3), zktest.WithFsync())
}
