package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"golang.org/x/term"
)

// The tree commands (ls, get, stat, set, create, rm, acl, whoami,
// ephemerals, server) read and change nodes as zkCli.sh does, one command
// line each. What they share is here: how a node's errors read, the JSON
// form of a Stat, and whether a stream is a terminal.

// anyVersion is the version that matches every version of a node (the
// default of --version).
const anyVersion = -1

// nodeError turns the error of an operation (verb: get, set, delete...) on
// the node at path into a message an operator can act on: a missing node
// is "no node PATH"; a refusal by the node's ACL still wraps
// zkcoord.ErrNoAuth, so that the hint about --auth follows it.
func nodeError(verb, path string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zkcoord.ErrNoNode):
		return fmt.Errorf("no node %s", path)
	case errors.Is(err, zkcoord.ErrNoAuth):
		return fmt.Errorf("%s %s: %w", verb, path, zkcoord.ErrNoAuth)
	case errors.Is(err, zkcoord.ErrInvalidPath):
		return cli.Usagef("%v", err)
	}
	return err
}

// cause returns what err, an error of the Session that names the
// request, wraps: the error itself, for a message that names the request
// already.
func cause(err error) error {
	if c := errors.Unwrap(err); c != nil {
		return c
	}
	return err
}

// versionError reports a write refused at version want (ErrBadVersion)
// with the version the node is at now (what: "data version", "ACL
// version"), if current can read it.
func versionError(verb, path, what string, want int32, current func() (int32, error)) error {
	if v, err := current(); err == nil {
		return fmt.Errorf("%s %s: its %s is %d, not %d", verb, path, what, v, want)
	}
	return fmt.Errorf("%s %s: its %s is not %d", verb, path, what, want)
}

// stat returns the Stat of the node at path, or zkcoord.ErrNoNode.
func stat(ctx context.Context, sess *zkcoord.Session, path string) (*zkcoord.Stat, error) {
	ok, st, err := sess.Exists(ctx, path)
	if err == nil && !ok {
		err = zkcoord.ErrNoNode
	}
	return st, err
}

// checkVersion reports a --version below -1 as a usage error.
func checkVersion(cmd *cobra.Command, v int32) error {
	if v < anyVersion {
		return cli.Usagef("%s: --version must be -1 (any) or a version, not %d", cli.Title(cmd), v)
	}
	return nil
}

// statJSON is the --json form of a node's Stat: zxids and counts as
// numbers, times as RFC 3339, the owner session in hex as elsewhere.
type statJSON struct {
	Czxid          int64     `json:"czxid"`
	Mzxid          int64     `json:"mzxid"`
	Pzxid          int64     `json:"pzxid"`
	Ctime          time.Time `json:"ctime"`
	Mtime          time.Time `json:"mtime"`
	Version        int32     `json:"version"`
	Cversion       int32     `json:"cversion"`
	Aversion       int32     `json:"aversion"`
	EphemeralOwner string    `json:"ephemeral_owner"`
	DataLength     int32     `json:"data_length"`
	NumChildren    int32     `json:"num_children"`
}

func toStatJSON(st *zkcoord.Stat) *statJSON {
	if st == nil {
		return nil
	}
	return &statJSON{Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid,
		Ctime: time.UnixMilli(st.Ctime).UTC(), Mtime: time.UnixMilli(st.Mtime).UTC(),
		Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion,
		EphemeralOwner: sessionID(st.EphemeralOwner), DataLength: st.DataLength, NumChildren: st.NumChildren}
}

// sessionID is how the commands write a session id: in hex, as ZooKeeper's
// logs and four-letter words do.
func sessionID(id int64) string {
	return fmt.Sprintf("0x%x", id)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
