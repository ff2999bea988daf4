package zktest

import "github.com/zkcoord/zkcoord/zktest/zkserver"

// SuperAuth is the digest credential ("user:password") of the super user
// of a cluster started WithReconfig, the one allowed to change its
// membership; see zkserver.SuperAuth.
const SuperAuth = zkserver.SuperAuth

// WithReconfig runs an ensemble with dynamic reconfiguration, whose
// membership Cluster.AddServer and Cluster.RemoveServer change; see
// zkserver.WithReconfig.
func WithReconfig() Option { return zkserver.WithReconfig() }
