package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
)

// Breadcrumb names the last active instance. It is written when an instance
// becomes active and deleted when it stops cleanly, so a breadcrumb found
// by the next active names an instance that may still be running: it must
// be fenced.
type Breadcrumb struct {
	// ID is the participant id of the instance that was active.
	ID string
	// Token is its fencing token (the creation zxid of its election node)
	// and Session its ZooKeeper session id.
	Token   int64
	Session int64
	// Data is what the instance published about itself (WithData): how
	// to reach and fence it.
	Data []byte
	// Raw holds the node's data when it could not be decoded (written by
	// something else); the other fields are then empty. It must still be
	// fenced.
	Raw []byte
	// Version is the breadcrumb node's version when it was read.
	Version int32
}

type breadcrumbRecord struct {
	ID      string `json:"id"`
	Token   int64  `json:"token"`
	Session int64  `json:"session"`
	Data    []byte `json:"data,omitempty"`
}

func encodeBreadcrumb(b Breadcrumb) []byte {
	data, _ := json.Marshal(breadcrumbRecord{ID: b.ID, Token: b.Token, Session: b.Session, Data: b.Data})
	return data
}

func decodeBreadcrumb(data []byte, version int32) Breadcrumb {
	var r breadcrumbRecord
	if err := json.Unmarshal(data, &r); err != nil || r.ID == "" {
		return Breadcrumb{Raw: append([]byte(nil), data...), Version: version}
	}
	return Breadcrumb{ID: r.ID, Token: r.Token, Session: r.Session, Data: r.Data, Version: version}
}

// Breadcrumb reads the breadcrumb: nil when the last active instance
// stopped cleanly (or none ever ran).
func (f *Failover) Breadcrumb(ctx context.Context) (*Breadcrumb, error) {
	b, err := elect.DetachValue(ctx, f.readBreadcrumb)
	if err != nil {
		return nil, fmt.Errorf("failover: read breadcrumb %s: %w", f.crumb, err)
	}
	return b, nil
}

func (f *Failover) readBreadcrumb(ctx context.Context) (*Breadcrumb, error) {
	data, st, err := f.sess.Get(ctx, f.crumb)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b := decodeBreadcrumb(data, st.Version)
	return &b, nil
}
