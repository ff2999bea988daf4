package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/zkcoord/zkcoord"
)

// ACL entries are written as zkCli.sh writes them: scheme:id:perms, the
// permissions as letters of "cdrwa" (create, delete, read, write, admin).

// permLetters are the permissions in the order zkCli.sh prints them.
var permLetters = []struct {
	letter byte
	perm   int32
}{
	{'c', zkcoord.PermCreate},
	{'d', zkcoord.PermDelete},
	{'r', zkcoord.PermRead},
	{'w', zkcoord.PermWrite},
	{'a', zkcoord.PermAdmin},
}

// formatPerms writes perms as letters of "cdrwa".
func formatPerms(perms int32) string {
	var b strings.Builder
	for _, p := range permLetters {
		if perms&p.perm != 0 {
			b.WriteByte(p.letter)
		}
	}
	return b.String()
}

// parsePerms reads permissions written as letters of "cdrwa", in any order.
func parsePerms(s string) (int32, error) {
	if s == "" {
		return 0, errors.New("no permissions: give some of cdrwa")
	}
	var perms int32
next:
	for i := 0; i < len(s); i++ {
		for _, p := range permLetters {
			if s[i] == p.letter {
				perms |= p.perm
				continue next
			}
		}
		return 0, fmt.Errorf("unknown permission %q in %q: want letters of cdrwa (create, delete, read, write, admin)", s[i], s)
	}
	return perms, nil
}

// formatACL writes an ACL entry as scheme:id:perms.
func formatACL(acl zkcoord.ACL) string {
	return acl.Scheme + ":" + acl.ID + ":" + formatPerms(acl.Perms)
}

// parseACL reads an ACL entry written as scheme:id:perms: world:anyone:r,
// auth::cdrwa (whoever the session is authenticated as), digest:user:hash:
// cdrwa (hash: base64 of the SHA-1 of user:password), ip:10.0.0.0/8:r, or
// another scheme the server knows (x509, sasl), whose id the server checks.
func parseACL(s string) (zkcoord.ACL, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 0 || scheme == "" {
		return zkcoord.ACL{}, fmt.Errorf("ACL %q: want scheme:id:permissions, like world:anyone:cdrwa", s)
	}
	id, letters := rest[:i], rest[i+1:]
	perms, err := parsePerms(letters)
	if err != nil {
		return zkcoord.ACL{}, fmt.Errorf("ACL %q: %v", s, err)
	}
	if err := checkACLID(scheme, id); err != nil {
		return zkcoord.ACL{}, fmt.Errorf("ACL %q: %v", s, err)
	}
	return zkcoord.ACL{Scheme: scheme, ID: id, Perms: perms}, nil
}

// checkACLID checks the id of the schemes ZooKeeper always has.
func checkACLID(scheme, id string) error {
	switch scheme {
	case "world":
		if id != "anyone" {
			return fmt.Errorf("the id of world is anyone, not %q", id)
		}
	case "auth":
		// The server ignores the id: the entry stands for the session's
		// own identities.
	case "digest":
		user, hash, ok := strings.Cut(id, ":")
		if hash == "x" {
			return errors.New("x is how ZooKeeper hides the hash of a digest from a client that may not " +
				"administer the node: give the hash (acl get shows it to an administrator of the node)")
		}
		if b, err := base64.StdEncoding.DecodeString(hash); !ok || user == "" || err != nil || len(b) != 20 {
			return errors.New("the id of digest is user:hash, the hash being the base64 of the SHA-1 of user:password " +
				"(28 characters), not the password (auth::cdrwa grants the user of --auth)")
		}
	case "ip":
		if net.ParseIP(id) == nil {
			if _, _, err := net.ParseCIDR(id); err != nil {
				return fmt.Errorf("the id of ip is an address or a network (10.0.0.0/8), not %q", id)
			}
		}
	default:
		if id == "" {
			return fmt.Errorf("no id for scheme %s", scheme)
		}
	}
	return nil
}
