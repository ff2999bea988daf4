package zkconn

import (
	"context"
	"errors"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// The calls. Each takes the full server path (a chroot is the caller's),
// writes one request in the order of the calls, and returns the reply's
// record, its Reply (zxid and write time) and an error: a wire.Code for
// the server's refusal, or one of the outcomes in errors.go.

// Do sends any request: op with body (nil for none), decoding the reply
// into resp (nil for none). It sets no watch.
func (c *Client) Do(ctx context.Context, op wire.OpCode, body wire.Encodable, resp wire.Decodable) (Reply, error) {
	if err := ownOp(op); err != nil {
		return Reply{}, notSent(err)
	}
	return c.do(ctx, newRequest(op, body, resp))
}

// ownOp refuses the operations only the client itself sends.
func ownOp(op wire.OpCode) error {
	switch op {
	case wire.OpCloseSession, wire.OpPing, wire.OpAuth, wire.OpSetWatches, wire.OpSetWatches2,
		wire.OpCreateSession, wire.OpSASL:
		return errors.New("zkconn: " + op.String() + " is the client's own")
	}
	return nil
}

// Create creates a node (create2) and returns its path and Stat.
func (c *Client) Create(ctx context.Context, path string, data []byte, acl []wire.ACL, mode wire.CreateMode) (wire.Create2Response, Reply, error) {
	var resp wire.Create2Response
	reply, err := c.do(ctx, newRequest(wire.OpCreate2, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: mode}, &resp))
	return resp, reply, err
}

// CreateContainer creates a container node (createContainer, ZooKeeper
// 3.5.3 and later), which the server deletes once its last child is gone.
func (c *Client) CreateContainer(ctx context.Context, path string, data []byte, acl []wire.ACL) (wire.Create2Response, Reply, error) {
	var resp wire.Create2Response
	reply, err := c.do(ctx, newRequest(wire.OpCreateContainer, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: wire.ModeContainer}, &resp))
	return resp, reply, err
}

// CreateTTL creates a persistent node with a TTL (createTTL, on servers
// with extended types enabled); mode is ModePersistentWithTTL or
// ModePersistentSequentialWithTTL.
func (c *Client) CreateTTL(ctx context.Context, path string, data []byte, acl []wire.ACL, mode wire.CreateMode, ttl time.Duration) (wire.Create2Response, Reply, error) {
	var resp wire.Create2Response
	req := &wire.CreateTTLRequest{Path: path, Data: data, ACL: acl, Flags: mode, TTL: ttl.Milliseconds()}
	reply, err := c.do(ctx, newRequest(wire.OpCreateTTL, req, &resp))
	return resp, reply, err
}

// Delete deletes a node at version (-1: any).
func (c *Client) Delete(ctx context.Context, path string, version int32) (Reply, error) {
	return c.do(ctx, newRequest(wire.OpDelete, &wire.DeleteRequest{Path: path, Version: version}, nil))
}

// SetData writes a node's data at version (-1: any).
func (c *Client) SetData(ctx context.Context, path string, data []byte, version int32) (wire.Stat, Reply, error) {
	var resp wire.SetDataResponse
	reply, err := c.do(ctx, newRequest(wire.OpSetData, &wire.SetDataRequest{Path: path, Data: data, Version: version}, &resp))
	return resp.Stat, reply, err
}

// Exists reads a node's Stat; a missing node is wire.ErrNoNode. With
// watch, the returned Watch is set whether or not the node exists (on a
// missing node it fires on its creation), as ZooKeeper's exists does.
func (c *Client) Exists(ctx context.Context, path string, watch bool) (wire.Stat, Reply, *Watch, error) {
	var resp wire.ExistsResponse
	reply, w, err := c.callWatch(ctx, newRequest(wire.OpExists, &wire.ExistsRequest{Path: path, Watch: watch}, &resp), watch, KindExist, path)
	return resp.Stat, reply, w, err
}

// GetData reads a node's data and Stat. With watch, the Watch is set
// only when the node exists (nil otherwise).
func (c *Client) GetData(ctx context.Context, path string, watch bool) (wire.GetDataResponse, Reply, *Watch, error) {
	var resp wire.GetDataResponse
	reply, w, err := c.callWatch(ctx, newRequest(wire.OpGetData, &wire.GetDataRequest{Path: path, Watch: watch}, &resp), watch, KindData, path)
	return resp, reply, w, err
}

// GetChildren lists a node's children with its Stat (getChildren2). With
// watch, the Watch is set only when the node exists.
func (c *Client) GetChildren(ctx context.Context, path string, watch bool) (wire.GetChildren2Response, Reply, *Watch, error) {
	var resp wire.GetChildren2Response
	reply, w, err := c.callWatch(ctx, newRequest(wire.OpGetChildren2, &wire.GetChildren2Request{Path: path, Watch: watch}, &resp), watch, KindChild, path)
	return resp, reply, w, err
}

// AddWatch sets a persistent watch on path, recursive or not (servers
// from 3.6 on). It stays, re-armed on every re-attach, until
// RemoveWatches removes it or the client ends.
func (c *Client) AddWatch(ctx context.Context, path string, mode wire.AddWatchMode) (Reply, *Watch, error) {
	kind := KindPersistent
	if mode == wire.AddWatchPersistentRecursive {
		kind = KindPersistentRecursive
	}
	var resp wire.ErrorResponse
	return c.callWatch(ctx, newRequest(wire.OpAddWatch, &wire.AddWatchRequest{Path: path, Mode: mode}, &resp), true, kind, path)
}

// RemoveWatches removes the connection's watches of type t on path from
// the server and, when it agrees, every local watch of that type on path,
// each of which receives a last removal event before this call returns.
// The server answers wire.ErrNoWatcher when it had none. (A 3.8 server
// knows only the types Children, Data and Any; Any also removes
// persistent watches there.)
func (c *Client) RemoveWatches(ctx context.Context, path string, t wire.WatcherType) (Reply, error) {
	req := &wire.RemoveWatchesRequest{Path: path, Type: t}
	r := newRequest(wire.OpRemoveWatches, req, nil)
	r.removes = req
	return c.do(ctx, r)
}

// Forget removes the watch w from the client alone, as removeWatches would
// remove it locally: it receives a last removal event and is not set again
// on a reconnection, but the server keeps it until it fires, the
// connection is lost or the session ends (its notifications then find no
// watch here). It is for servers that cannot remove a single watch of its
// kind (persistent watches before ZooKeeper 3.9).
func (c *Client) Forget(w *Watch) {
	select {
	case <-c.done:
	default:
		c.post(item{forget: w})
	}
}

// CheckWatches asks whether the server holds a watch of type t on path
// for this session: nil if so, wire.ErrNoWatcher if not.
func (c *Client) CheckWatches(ctx context.Context, path string, t wire.WatcherType) (Reply, error) {
	return c.do(ctx, newRequest(wire.OpCheckWatches, &wire.CheckWatchesRequest{Path: path, Type: t}, nil))
}

// Sync makes the server catch up with the leader before it answers the
// requests written after this one.
func (c *Client) Sync(ctx context.Context, path string) (Reply, error) {
	var resp wire.SyncResponse
	return c.do(ctx, newRequest(wire.OpSync, &wire.SyncRequest{Path: path}, &resp))
}

// Multi applies ops atomically (OpMulti) and returns the results. A multi
// the server refused as a whole is still answered OK: every result is
// then an error result, OK for the operations before the failing one,
// its code for it and wire.ErrRuntimeInconsistency after it, as
// ZooKeeper's MultiResponse carries it.
func (c *Client) Multi(ctx context.Context, ops []wire.MultiOp) (wire.MultiResponse, Reply, error) {
	var resp wire.MultiResponse
	reply, err := c.do(ctx, newRequest(wire.OpMulti, &wire.MultiRequest{Ops: ops}, &resp))
	return resp, reply, err
}

// callWatch sends r, with a watch of kind on path if watch is set, and
// returns that watch only if the server set it.
func (c *Client) callWatch(ctx context.Context, r *request, watch bool, kind WatchKind, path string) (Reply, *Watch, error) {
	if watch {
		r.watch = newWatch(kind, path)
	}
	res := c.call(ctx, r)
	if !res.watched {
		return res.reply, nil, res.err
	}
	return res.reply, r.watch, res.err
}
