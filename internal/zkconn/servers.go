package zkconn

import (
	"errors"
	"math/rand/v2"
	"slices"
)

// The server list. Dial shuffles Config.Servers once, and connect tries
// them in turn. SetServers replaces the list while the session lives, as
// ZooKeeper's updateServerList does when the ensemble's membership changes.

// errServerRemoved ends a connection to a server no longer in the list.
var errServerRemoved = errors.New("zkconn: the server left the server list")

// SetServers replaces the servers the client connects to ("host:port",
// each resolved again on every attempt, like Config.Servers); the new list
// is shuffled. The session and its connection stay as they are when the
// connection's server is in the new list (compared as written). Otherwise
// the connection is dropped, as after any connection loss (requests in
// flight fail with wire.ErrConnectionLoss), and the client re-attaches to
// the session on one of the new servers. It reports whether it dropped a
// connection.
//
// ZooKeeper's own client also moves some of the clients of servers that
// stay, with a probability that evens out the load over a grown
// ensemble; this one does not: a client stays on its server while that
// server is a member, and new servers receive clients as connections are
// lost or opened.
func (c *Client) SetServers(servers []string) (dropped bool, err error) {
	if len(servers) == 0 {
		return false, errors.New("zkconn: no servers")
	}
	list := shuffled(servers)
	c.mu.Lock()
	c.servers, c.next = list, 0
	cn := c.cn
	stays := cn == nil || slices.Contains(list, c.server)
	c.mu.Unlock()
	if stays {
		return false, nil
	}
	cn.shutdown(errServerRemoved)
	return true, nil
}

// Servers returns the servers the client connects to, in the order it
// tries them.
func (c *Client) Servers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.servers)
}

// nextServer returns the server to try next, and moves on.
func (c *Client) nextServer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	addr := c.servers[c.next%len(c.servers)]
	c.next = (c.next + 1) % len(c.servers)
	return addr
}

// serverCount returns how many servers there are to try.
func (c *Client) serverCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.servers)
}

func shuffled(servers []string) []string {
	out := slices.Clone(servers)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
