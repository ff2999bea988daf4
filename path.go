package zkcoord

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// ValidatePath reports whether p is a well-formed absolute ZooKeeper path:
// it starts with "/", has no empty, "." or ".." component, no trailing "/"
// (except the root itself) and no control or reserved characters. The error
// wraps ErrInvalidPath.
func ValidatePath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty path", ErrInvalidPath)
	}
	if p[0] != '/' {
		return fmt.Errorf("%w: %q is not absolute", ErrInvalidPath, p)
	}
	if p == "/" {
		return nil
	}
	if strings.HasSuffix(p, "/") {
		return fmt.Errorf("%w: %q ends with /", ErrInvalidPath, p)
	}
	for _, part := range strings.Split(p[1:], "/") {
		if err := ValidateName(part); err != nil {
			return fmt.Errorf("%w: in %q", err, p)
		}
	}
	return nil
}

// ValidateName reports whether name can be one component of a path.
func ValidateName(name string) error {
	switch name {
	case "":
		return fmt.Errorf("%w: empty name", ErrInvalidPath)
	case ".", "..":
		return fmt.Errorf("%w: name %q is reserved", ErrInvalidPath, name)
	case "zookeeper":
		// Allowed below the root; only /zookeeper itself is reserved and
		// the server enforces that.
	}
	for _, r := range name {
		if r == '/' || r == 0 || unicode.IsControl(r) ||
			(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) ||
			r == unicode.ReplacementChar {
			return fmt.Errorf("%w: name %q has a forbidden character %U", ErrInvalidPath, name, r)
		}
	}
	return nil
}

// Join joins a parent path and child names with "/".
func Join(parent string, names ...string) string {
	p := strings.TrimSuffix(parent, "/")
	for _, n := range names {
		p += "/" + n
	}
	if p == "" {
		return "/"
	}
	return p
}

// Parent returns the parent of an absolute path ("/" for top-level nodes).
func Parent(p string) string { return zkconn.Parent(p) }

// Base returns the last component of a path.
func Base(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// chroot adds and strips a path prefix; the zero value is no chroot.
type chroot string

func (c chroot) add(p string) string {
	if c == "" {
		return p
	}
	if p == "/" {
		return string(c)
	}
	return string(c) + p
}

func (c chroot) strip(p string) string {
	if c == "" {
		return p
	}
	rest, ok := strings.CutPrefix(p, string(c))
	if !ok || (rest != "" && rest[0] != '/') {
		return p
	}
	if rest == "" {
		return "/"
	}
	return rest
}
