package zkcoord

import (
	"context"
	"fmt"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// ReadOp is one read of a MultiRead: build it with GetOp or ChildrenOp.
type ReadOp struct {
	op wire.MultiOp
}

// GetOp reads a node's data and stat in a MultiRead.
func GetOp(path string) ReadOp {
	return ReadOp{wire.MultiOp{Type: wire.OpGetData, Path: path}}
}

// ChildrenOp lists a node's children in a MultiRead.
func ChildrenOp(path string) ReadOp {
	return ReadOp{wire.MultiOp{Type: wire.OpGetChildren, Path: path}}
}

// ReadResult is the answer to one ReadOp: Data and Stat for a GetOp,
// Children for a ChildrenOp, or Err (for example ErrNoNode) for a read
// that failed.
type ReadResult struct {
	Data     []byte
	Stat     *Stat
	Children []string
	Err      error
}

// MultiRead runs several reads in one request (multiRead, ZooKeeper 3.6
// and later): one round trip, each read answered on its own, none setting
// a watch. The reads are not a snapshot: another client's write may fall
// between two of them, as between separate reads. Like every read it is
// retried on connection loss. A server without multiRead fails it with
// an error wrapping ErrUnimplemented.
func (s *Session) MultiRead(ctx context.Context, ops ...ReadOp) ([]ReadResult, error) {
	rooted := make([]wire.MultiOp, len(ops))
	for i, op := range ops {
		o := op.op
		if o.Type != wire.OpGetData && o.Type != wire.OpGetChildren {
			return nil, fmt.Errorf("zkcoord: multiRead: read %d is empty; build it with GetOp or ChildrenOp", i)
		}
		if err := ValidatePath(o.Path); err != nil {
			return nil, err
		}
		o.Path = s.root.add(o.Path)
		rooted[i] = o
	}
	var resp wire.MultiResponse
	if err := s.read(ctx, "multiRead", fmt.Sprintf("(%d reads)", len(ops)), wire.OpMultiRead, &wire.MultiRequest{Ops: rooted}, &resp); err != nil {
		return nil, err
	}
	if len(resp.Results) != len(ops) {
		return nil, fmt.Errorf("zkcoord: multiRead: %d results for %d reads", len(resp.Results), len(ops))
	}
	out := make([]ReadResult, len(ops))
	for i, r := range resp.Results {
		switch r.Type {
		case wire.OpGetData:
			out[i] = ReadResult{Data: r.Data, Stat: statOf(r.Stat)}
		case wire.OpGetChildren:
			out[i] = ReadResult{Children: r.Children}
		default:
			out[i] = ReadResult{Err: wrapPath(r.Err.Err(), "read", ops[i].op.Path)}
		}
	}
	return out, nil
}
