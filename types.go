package zkcoord

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// Stat is a node's metadata, as ZooKeeper's Stat record carries it.
type Stat struct {
	Czxid          int64 // zxid of the change that created the node
	Mzxid          int64 // zxid of the change that last modified its data
	Ctime          int64 // creation time, milliseconds since the epoch
	Mtime          int64 // last modification time, milliseconds since the epoch
	Version        int32 // number of changes to its data
	Cversion       int32 // number of changes to its children
	Aversion       int32 // number of changes to its ACL
	EphemeralOwner int64 // the owning session of an ephemeral node, 0 otherwise
	DataLength     int32 // length of its data
	NumChildren    int32 // number of its children
	Pzxid          int64 // zxid of the change that last modified its children
}

func statOf(s wire.Stat) *Stat {
	st := Stat(s)
	return &st
}

// ACL grants Perms to the identity ID of Scheme, for example world:anyone
// or digest:user:hash.
type ACL struct {
	Perms  int32
	Scheme string
	ID     string
}

// Permissions of an ACL.
const (
	PermRead int32 = 1 << iota
	PermWrite
	PermCreate
	PermDelete
	PermAdmin
	PermAll = 0x1f
)

// WorldACL grants perms to everyone.
func WorldACL(perms int32) []ACL {
	return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}}
}

// AuthACL grants perms to every identity the creating session has
// authenticated as (ZooKeeper's "auth" scheme).
func AuthACL(perms int32) []ACL {
	return []ACL{{Perms: perms, Scheme: "auth", ID: ""}}
}

// DigestACL grants perms to the digest identity user:password, stored as
// the server stores it: user:base64(sha1(user:password)).
func DigestACL(perms int32, user, password string) []ACL {
	return []ACL{{Perms: perms, Scheme: "digest", ID: user + ":" + digest(user, password)}}
}

// digest is ZooKeeper's DigestAuthenticationProvider.generateDigest
// without the user: base64 of the SHA-1 of "user:password".
func digest(user, password string) string {
	h := sha1.Sum([]byte(user + ":" + password))
	return base64.StdEncoding.EncodeToString(h[:])
}

func wireACL(acl []ACL) []wire.ACL {
	out := make([]wire.ACL, len(acl))
	for i, a := range acl {
		out[i] = wire.ACL{Perms: wire.Perm(a.Perms), ID: wire.ID{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

// Create flags. FlagSequence appends a ten-digit sequence number to the
// node's name; FlagEphemeral ties the node to the Session.
const (
	FlagPersistent          int32 = 0
	FlagEphemeral           int32 = 1
	FlagSequence            int32 = 2
	FlagEphemeralSequential       = FlagEphemeral | FlagSequence
)

// EventType says what a watch saw.
type EventType int32

// Watch event types. EventNotWatching ends a watch that can no longer fire
// (its Session ended); Event.Err says why.
const (
	EventNodeCreated         EventType = 1
	EventNodeDeleted         EventType = 2
	EventNodeDataChanged     EventType = 3
	EventNodeChildrenChanged EventType = 4
	EventNotWatching         EventType = -2
)

func (t EventType) String() string {
	switch t {
	case EventNodeCreated:
		return "EventNodeCreated"
	case EventNodeDeleted:
		return "EventNodeDeleted"
	case EventNodeDataChanged:
		return "EventNodeDataChanged"
	case EventNodeChildrenChanged:
		return "EventNodeChildrenChanged"
	case EventNotWatching:
		return "EventNotWatching"
	case EventRearmed:
		return "EventRearmed"
	}
	return fmt.Sprintf("EventType(%d)", int32(t))
}

// Event is what a one-shot watch delivers: the change it saw, on Path
// (relative to the chroot), or EventNotWatching with Err.
type Event struct {
	Type EventType
	Path string
	Err  error
}

// MultiResponse is the result of one operation of a transaction. String
// is a create's path (relative to the chroot); Stat is a set's new stat;
// Error is the operation's error, nil if it succeeded. When a transaction
// fails, the operations before the failed one report nil and those after
// it an error of their own (ZooKeeper's RuntimeInconsistency).
type MultiResponse struct {
	Stat   *Stat
	String string
	Error  error
}
