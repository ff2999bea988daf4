package alloc

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
)

var (
	// ErrCorrupt is wrapped by [Decode] for data it cannot read: foreign,
	// truncated, corrupted, or of an unknown format version.
	ErrCorrupt = errors.New("alloc: corrupt allocation data")
	// ErrTooLarge is wrapped by [Encode] when the encoded record would
	// exceed [MaxEncodedSize].
	ErrTooLarge = errors.New("alloc: encoded allocation too large")
)

const (
	// MaxEncodedSize bounds the size of an encoded record, leaving room
	// below ZooKeeper's default 1 MB (jute.maxbuffer) limit for the rest of
	// the request.
	MaxEncodedSize = 900 << 10

	// maxBody bounds the decompressed body Decode accepts, so that a small
	// hostile input cannot make it allocate without limit.
	maxBody = 32 << 20

	// FormatVersion is the format version written by [Encode].
	FormatVersion = 1
)

// magic starts every encoded record: a byte that is not printable ASCII (so
// that JSON or text written by other tools is recognised at once), two letters
// and the format version.
var magic = [3]byte{0xA7, 'z', 'a'}

const headerLen = len(magic) + 1 + 4 // magic, version, CRC-32C of the compressed body

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is what a coordinator writes into the resources znode.
type Record struct {
	// Term identifies the coordinator that wrote the record (for example the
	// term node's version when it became coordinator). Opaque here.
	Term int64
	// Generation increases with each rebalancing.
	Generation int64
	// Assignment is the allocation decided by that rebalancing.
	Assignment Assignment
}

// Encode returns the binary form of r: a 4-byte header (a magic byte 0xA7,
// "za", the format version), the CRC-32C of what follows, then the body
// compressed with raw DEFLATE. The body holds the term and generation, the
// sorted client ids and resource ids (each front-coded against its
// predecessor) and, per resource, its owner's index. Clients owning nothing
// are kept. Encode is deterministic.
//
// Encode fails with an error wrapping [ErrInvalid] if a resource is listed
// twice, and with [ErrTooLarge] if the result would exceed [MaxEncodedSize].
func Encode(r Record) ([]byte, error) {
	clients := r.Assignment.Clients()
	index := make(map[string]int, len(clients))
	for i, c := range clients {
		index[c] = i
	}
	owners := make(map[string]string)
	for _, c := range clients {
		for _, res := range r.Assignment[c] {
			if prev, dup := owners[res]; dup {
				return nil, fmt.Errorf("%w: resource %q listed by %q and %q", ErrInvalid, res, prev, c)
			}
			owners[res] = c
		}
	}
	resources := make([]string, 0, len(owners))
	for res := range owners {
		resources = append(resources, res)
	}
	slices.Sort(resources)

	body := make([]byte, 0, 64+8*len(clients)+8*len(resources))
	body = binary.AppendVarint(body, r.Term)
	body = binary.AppendVarint(body, r.Generation)
	body = appendNames(body, clients)
	body = appendNames(body, resources)
	prev := 0
	for _, res := range resources {
		i := index[owners[res]]
		body = binary.AppendVarint(body, int64(i-prev))
		prev = i
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("%w: %d bytes before compression", ErrTooLarge, len(body))
	}

	var buf bytes.Buffer
	buf.Grow(headerLen + len(body)/2)
	buf.Write(magic[:])
	buf.WriteByte(FormatVersion)
	buf.Write([]byte{0, 0, 0, 0}) // checksum, filled in below
	zw, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	binary.BigEndian.PutUint32(out[len(magic)+1:headerLen], crc32.Checksum(out[headerLen:], castagnoli))
	if len(out) > MaxEncodedSize {
		return nil, fmt.Errorf("%w: %d bytes (limit %d) for %d clients and %d resources",
			ErrTooLarge, len(out), MaxEncodedSize, len(clients), len(resources))
	}
	return out, nil
}

// appendNames appends a count and the sorted names, each as the length of the
// prefix it shares with its predecessor, the length of the rest, the rest.
func appendNames(b []byte, names []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(names)))
	prev := ""
	for _, n := range names {
		p := commonPrefix(prev, n)
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendUvarint(b, uint64(len(n)-p))
		b = append(b, n[p:]...)
		prev = n
	}
	return b
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Decode parses data written by [Encode]. Empty data decodes to the zero
// Record and no error: a group nobody has allocated yet. Anything else that
// is not a complete, intact record of a known format version fails with an
// error wrapping [ErrCorrupt]. The decoded assignment lists every encoded
// client (with an empty non-nil slice if it owns nothing), each list sorted.
func Decode(data []byte) (Record, error) {
	if len(data) == 0 {
		return Record{}, nil
	}
	if len(data) < headerLen || !bytes.Equal(data[:len(magic)], magic[:]) {
		return Record{}, fmt.Errorf("%w: not an allocation record (%d bytes starting %q)", ErrCorrupt, len(data), prefix(data))
	}
	if v := data[len(magic)]; v != FormatVersion {
		return Record{}, fmt.Errorf("%w: unknown format version %d", ErrCorrupt, v)
	}
	want := binary.BigEndian.Uint32(data[len(magic)+1 : headerLen])
	if crc32.Checksum(data[headerLen:], castagnoli) != want {
		return Record{}, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	in := bytes.NewReader(data[headerLen:])
	zr := flate.NewReader(in)
	body, err := io.ReadAll(io.LimitReader(zr, maxBody+1))
	if err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if len(body) > maxBody {
		return Record{}, fmt.Errorf("%w: body larger than %d bytes", ErrCorrupt, maxBody)
	}
	if in.Len() != 0 {
		return Record{}, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, in.Len())
	}
	rec, err := parseBody(body)
	if err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return rec, nil
}

func prefix(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// reader reads the body; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) uvarint() uint64 { return readVarint(r, binary.Uvarint, "unsigned varint") }

func (r *reader) varint() int64 { return readVarint(r, binary.Varint, "varint") }

// readVarint reads one number with read (binary.Uvarint or binary.Varint);
// what names its encoding in the error.
func readVarint[T uint64 | int64](r *reader, read func([]byte) (T, int), what string) T {
	if r.err != nil {
		return 0
	}
	v, n := read(r.b)
	if n <= 0 {
		r.fail("bad %s at %d bytes from the end", what, len(r.b))
		return 0
	}
	r.b = r.b[n:]
	return v
}

// names reads a list written by appendNames; each name takes at least
// minBytes bytes of the remaining body (including data that follows it), which
// bounds the count before anything is allocated.
func (r *reader) names(what string, minBytes int) []string {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)/minBytes) {
		r.fail("%s: count %d exceeds the data", what, n)
		return nil
	}
	// The names are built in one buffer and cut from it: one allocation
	// for the lot rather than one per name.
	var buf strings.Builder
	buf.Grow(r.namesLen(n))
	ends := make([]int, 0, n)
	prevStart, prevEnd := 0, 0
	for i := uint64(0); i < n && r.err == nil; i++ {
		p := r.uvarint()
		l := r.uvarint()
		if r.err != nil {
			break
		}
		if p > uint64(prevEnd-prevStart) || l > uint64(len(r.b)) {
			r.fail("%s %d: bad lengths", what, i)
			break
		}
		start := buf.Len()
		buf.WriteString(buf.String()[prevStart : prevStart+int(p)])
		buf.Write(r.b[:l])
		r.b = r.b[l:]
		all := buf.String()
		if i > 0 && all[start:] <= all[prevStart:prevEnd] {
			r.fail("%s %d: not strictly sorted", what, i)
			break
		}
		ends = append(ends, len(all))
		prevStart, prevEnd = start, len(all)
	}
	if r.err != nil {
		return nil
	}
	all := buf.String()
	out := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// namesLen returns the total length of the n names that follow, as far as
// the data is intact; names checks the rest.
func (r *reader) namesLen(n uint64) int {
	b, total, prev := r.b, 0, 0
	for i := uint64(0); i < n; i++ {
		p, k := binary.Uvarint(b)
		if k <= 0 {
			break
		}
		l, k2 := binary.Uvarint(b[k:])
		if k2 <= 0 || p > uint64(prev) || l > uint64(len(b)-k-k2) {
			break
		}
		b = b[k+k2+int(l):]
		prev = int(p) + int(l)
		total += prev
	}
	return total
}

func parseBody(body []byte) (Record, error) {
	r := &reader{b: body}
	var rec Record
	rec.Term = r.varint()
	rec.Generation = r.varint()
	clients := r.names("client", 2)
	resources := r.names("resource", 3)
	if r.err != nil {
		return Record{}, r.err
	}
	if len(resources) > 0 && len(clients) == 0 {
		return Record{}, errors.New("resources without clients")
	}
	owner := make([]int, len(resources))
	counts := make([]int, len(clients))
	prev := int64(0)
	for i := range resources {
		d := r.varint()
		if r.err != nil {
			return Record{}, r.err
		}
		o := prev + d
		if d < -int64(len(clients)) || d > int64(len(clients)) || o < 0 || o >= int64(len(clients)) {
			return Record{}, fmt.Errorf("resource %d: owner index out of range", i)
		}
		owner[i] = int(o)
		counts[o]++
		prev = o
	}
	if len(r.b) != 0 {
		return Record{}, fmt.Errorf("%d unread bytes", len(r.b))
	}
	a := make(Assignment, len(clients))
	lists := make([][]string, len(clients))
	backing := make([]string, len(resources)) // one array cut into every list
	off := 0
	for i := range clients {
		lists[i] = backing[off : off : off+counts[i]]
		off += counts[i]
	}
	for i, res := range resources {
		lists[owner[i]] = append(lists[owner[i]], res)
	}
	for i, c := range clients {
		a[c] = lists[i]
	}
	rec.Assignment = a
	return rec, nil
}
