package queue

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Curator's framing of the items of one node (its ItemSerializer): a
// 4-byte big-endian version, then for each item the byte 0x01, its length
// as a 4-byte big-endian signed integer and its bytes, then the byte 0x02.
// A node written by put holds one item; one written by putMulti holds
// several, delivered together.
const (
	curatorVersion  = 0x00010001
	curatorItemCode = 0x01
	curatorEndCode  = 0x02
)

// encodeItems frames items as Curator does.
func encodeItems(items [][]byte) []byte {
	size := 4 + 1
	for _, it := range items {
		size += 1 + 4 + len(it)
	}
	b := make([]byte, 0, size)
	b = binary.BigEndian.AppendUint32(b, curatorVersion)
	for _, it := range items {
		b = append(b, curatorItemCode)
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return append(b, curatorEndCode)
}

// decodeItems reads Curator's framing. It is stricter than Curator, which
// ignores bytes after the end code: those are refused too, since no
// Curator writes them.
func decodeItems(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, errors.New("shorter than the version")
	}
	if v := binary.BigEndian.Uint32(b); v != curatorVersion {
		return nil, fmt.Errorf("version %#08x, want %#08x", v, curatorVersion)
	}
	b = b[4:]
	items := [][]byte{}
	for {
		if len(b) == 0 {
			return nil, errors.New("no end code")
		}
		code := b[0]
		b = b[1:]
		switch code {
		case curatorEndCode:
			if len(b) > 0 {
				return nil, fmt.Errorf("%d bytes after the end code", len(b))
			}
			return items, nil
		case curatorItemCode:
		default:
			return nil, fmt.Errorf("opcode %#02x, want %#02x or %#02x", code, curatorItemCode, curatorEndCode)
		}
		if len(b) < 4 {
			return nil, fmt.Errorf("item %d: length cut off", len(items))
		}
		n := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n < 0 || int(n) > len(b) {
			return nil, fmt.Errorf("item %d: length %d with %d bytes left", len(items), n, len(b))
		}
		items = append(items, b[:n:n])
		b = b[n:]
	}
}

// CorruptError is returned for a node that has a queue item's name but
// holds data that is not in the queue's format (Curator's framing of its
// items). It is never dropped silently: a Take takes such a node like any
// item and hands its data over here; a Claim holds it and returns the
// claim here, to be acknowledged (removing the node) or released. It wraps
// zkcoord.ErrBadData.
type CorruptError struct {
	Path  string // the node
	Data  []byte // its data, as stored
	Claim *Claim // for Claim and TryClaim: the claim that holds the node
	Err   error  // what is wrong with the data
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("queue: %s: %v: %v", e.Path, zkcoord.ErrBadData, e.Err)
}

func (e *CorruptError) Unwrap() error { return zkcoord.ErrBadData }
