package zktest

import (
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

// PeerLinks puts a fault proxy on every link from one server of an
// ensemble to another's quorum port: the connection a follower keeps to its
// leader. Blackholing Link(f, leader) cuts follower f off from the leader
// while its clients still reach it, and leader election still tells it who
// leads, so it keeps trying to follow through the dead link. Pass Option()
// to Start or Launch; Close the links after the cluster.
type PeerLinks struct {
	mu     sync.Mutex
	links  map[[2]int]*Proxy
	closed bool
}

// NewPeerLinks returns links to be set up when a cluster starts.
func NewPeerLinks() *PeerLinks {
	return &PeerLinks{links: make(map[[2]int]*Proxy)}
}

// Option routes the cluster's quorum links through l.
func (l *PeerLinks) Option() Option { return zkserver.WithPeerAddr(l.route) }

func (l *PeerLinks) route(from, to int, addr string) (string, error) {
	zp, err := zkserver.OpenProxy([]string{addr})
	if err != nil {
		return "", err
	}
	p := &Proxy{Proxy: zp}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		p.Close()
		return "", errClosed
	}
	if old := l.links[[2]int{from, to}]; old != nil {
		old.Close() // from a start attempt given up
	}
	l.links[[2]int{from, to}] = p
	return p.Servers()[0], nil
}

// Link returns the proxy on the link from server from to server to's quorum
// port (indexes as in Cluster.Server). It panics if the cluster was not
// started with l's Option or has no such pair.
func (l *PeerLinks) Link(from, to int) *Proxy {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.links[[2]int{from, to}]
	if p == nil {
		panic(fmt.Sprintf("zktest: no peer link from server %d to server %d", from, to))
	}
	return p
}

// Close closes every link.
func (l *PeerLinks) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, p := range l.links {
		p.Close()
	}
}
