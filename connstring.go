package zkcoord

import (
	"fmt"
	"net"
	"strings"
)

// DefaultPort is ZooKeeper's client port, used for a server given without
// one.
const DefaultPort = "2181"

// ParseConnectString reads a ZooKeeper connect string as ZooKeeper's own
// client, Curator and Kazoo accept it: comma-separated servers, each
// host:port or a host alone (port 2181), optionally followed by a chroot
// path, as in "zk1:2181,zk2:2181/app". It returns the servers for
// Config.Servers and the chroot for Config.Chroot ("" without one).
func ParseConnectString(s string) (servers []string, chroot string, err error) {
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], strings.TrimSuffix(s[i:], "/")
		if chroot != "" {
			if err := ValidatePath(chroot); err != nil {
				return nil, "", fmt.Errorf("%w: connect string %q: chroot: %w", ErrInvalidConfig, s, err)
			}
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			// A host without a port; an IPv6 address needs brackets.
			if strings.Count(h, ":") > 1 && !strings.HasPrefix(h, "[") {
				return nil, "", fmt.Errorf("%w: connect string %q: server %q: write an IPv6 address as [addr]:port", ErrInvalidConfig, s, h)
			}
			h = net.JoinHostPort(strings.Trim(h, "[]"), DefaultPort)
		}
		servers = append(servers, h)
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("%w: connect string %q: no servers", ErrInvalidConfig, s)
	}
	return servers, chroot, nil
}
