package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every error a Decoder reports: the bytes are
// not an encoding of the record asked for (too short, a negative or too
// large length or count, an unknown multi operation).
var ErrMalformed = errors.New("wire: malformed data")

// Encodable is a record that appends its jute encoding to an Encoder.
type Encodable interface {
	Encode(e *Encoder)
}

// Decodable is a record that reads itself from a Decoder. Decode leaves any
// failure in the Decoder (see Decoder.Err); it never panics.
type Decodable interface {
	Decode(d *Decoder)
}

// Record is a jute record that can be both written and read.
type Record interface {
	Encodable
	Decodable
}

// Encoder appends jute's binary encoding (BinaryOutputArchive) to a byte
// slice: integers big-endian, a boolean as one byte, a buffer or string as
// an int32 length and the bytes, a vector as an int32 count and the
// elements. The zero Encoder is ready to use.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder appending to buf.
func NewEncoder(buf []byte) *Encoder { return &Encoder{buf: buf} }

// Bytes returns the bytes appended so far (with those buf held before).
func (e *Encoder) Bytes() []byte { return e.buf }

// Int32 appends jute's int.
func (e *Encoder) Int32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }

// Int64 appends jute's long.
func (e *Encoder) Int64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

// Bool appends jute's boolean: one byte, 1 or 0.
func (e *Encoder) Bool(v bool) {
	var b byte
	if v {
		b = 1
	}
	e.buf = append(e.buf, b)
}

// Buffer appends jute's buffer. A nil slice is jute's null (length -1), an
// empty non-nil slice has length 0: ZooKeeper keeps the two apart (a node
// created with null data reads back as null).
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(b)))
	e.buf = append(e.buf, b...)
}

// String appends jute's ustring: the bytes of s, which ZooKeeper reads as
// UTF-8. A Go string is never null, so it is never written as length -1.
// ZooKeeper's own encoder writes a character outside the Basic
// Multilingual Plane as two 3-byte surrogates (CESU-8), not as UTF-8's
// four bytes, but its path validation refuses such characters, so for
// every valid path the bytes are the same.
func (e *Encoder) String(s string) {
	e.Int32(int32(len(s)))
	e.buf = append(e.buf, s...)
}

// nullString appends s, or jute's null string (length -1) for "".
func (e *Encoder) nullString(s string) {
	if s == "" {
		e.Int32(-1)
		return
	}
	e.String(s)
}

// Strings appends a vector of ustring. nil and empty are both written as
// count 0: a null vector would make the server fail on the request.
func (e *Encoder) Strings(v []string) {
	e.Int32(int32(len(v)))
	for _, s := range v {
		e.String(s)
	}
}

// Record appends a nested record.
func (e *Encoder) Record(r Encodable) { r.Encode(e) }

// encodeVector appends a vector of records (count 0 for nil, see Strings).
func encodeVector[T any, P interface {
	*T
	Encodable
}](e *Encoder, v []T) {
	e.Int32(int32(len(v)))
	for i := range v {
		P(&v[i]).Encode(e)
	}
}

// Decoder reads jute's binary encoding from a byte slice. Its first failure
// is kept and every later read returns zero values, so a record's Decode
// reads its fields in order and the caller checks Err once.
//
// A Decoder never panics and never allocates more than the input justifies:
// a length or count is checked against the bytes that remain before
// anything is allocated (each element of a vector takes at least one, and
// for most elements several, bytes). This is stricter than jute's
// jute.maxbuffer check, which a frame's maximum size already covers.
// Buffers and strings are copied, so the input may be reused once decoding
// is done.
type Decoder struct {
	buf []byte
	err error
}

// NewDecoder returns a Decoder reading buf.
func NewDecoder(buf []byte) *Decoder { return &Decoder{buf: buf} }

// Err returns the first failure, wrapping ErrMalformed, or nil.
func (d *Decoder) Err() error { return d.err }

// Len returns the number of bytes not yet read.
func (d *Decoder) Len() int { return len(d.buf) }

// Fail records a failure (the first one is kept) and stops the Decoder.
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	d.buf = nil
}

func (d *Decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.buf) {
		d.Fail("%s needs %d bytes, %d left", what, n, len(d.buf))
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

// Int32 reads jute's int.
func (d *Decoder) Int32() int32 {
	b := d.take(4, "int")
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Int64 reads jute's long.
func (d *Decoder) Int64() int64 {
	b := d.take(8, "long")
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Bool reads jute's boolean. Java's readBoolean takes any non-zero byte
// as true, and so does Bool.
func (d *Decoder) Bool() bool {
	b := d.take(1, "boolean")
	return b != nil && b[0] != 0
}

// optionalBool reads a boolean that ends a record and that older peers
// leave out: no byte left reads as false, as ZooKeeper reads the readOnly
// of its connect records.
func (d *Decoder) optionalBool() bool {
	return d.err == nil && d.Len() > 0 && d.Bool()
}

// length reads a length or count: -1 is null, other negative values are
// malformed, and a value larger than the remaining bytes could hold (at
// minSize bytes per element) is malformed too.
func (d *Decoder) length(what string, minSize int) (n int, null bool) {
	l := d.Int32()
	if d.err != nil {
		return 0, false
	}
	if l == -1 {
		return 0, true
	}
	if l < 0 {
		d.Fail("negative %s length %d", what, l)
		return 0, false
	}
	if int64(l)*int64(minSize) > int64(len(d.buf)) {
		d.Fail("%s of length %d does not fit in the %d bytes left", what, l, len(d.buf))
		return 0, false
	}
	return int(l), false
}

// Buffer reads jute's buffer: nil for null (length -1), a non-nil copy
// otherwise, empty for length 0.
func (d *Decoder) Buffer() []byte {
	n, null := d.length("buffer", 1)
	if null || d.err != nil {
		return nil
	}
	b := d.take(n, "buffer")
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, n), b...)
}

// String reads jute's ustring; null (length -1) reads as "".
func (d *Decoder) String() string {
	n, null := d.length("string", 1)
	if null || d.err != nil {
		return ""
	}
	return string(d.take(n, "string"))
}

// Strings reads a vector of ustring. A null or empty vector reads as nil,
// so that a decoded value encodes and decodes again to the same value.
func (d *Decoder) Strings() []string {
	n, _ := d.length("vector<ustring>", 4)
	if n == 0 || d.err != nil {
		return nil
	}
	v := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		v = append(v, d.String())
	}
	if d.err != nil {
		return nil
	}
	return v
}

// Record reads a nested record.
func (d *Decoder) Record(r Decodable) { r.Decode(d) }

// decodeVector reads a vector of records whose encoding takes at least
// minSize bytes each. Null and empty read as nil, as in Strings.
func decodeVector[T any, P interface {
	*T
	Decodable
}](d *Decoder, what string, minSize int) []T {
	n, _ := d.length(what, minSize)
	if n == 0 || d.err != nil {
		return nil
	}
	v := make([]T, n)
	for i := range v {
		P(&v[i]).Decode(d)
		if d.err != nil {
			return nil
		}
	}
	return v
}

// Marshal appends the encodings of the records, in order, to buf.
func Marshal(buf []byte, recs ...Encodable) []byte {
	e := Encoder{buf: buf}
	for _, r := range recs {
		r.Encode(&e)
	}
	return e.buf
}

// Unmarshal decodes buf into the records, in order. Bytes left over after
// the last record are ignored, as ZooKeeper's own client does, so that a
// newer server may append fields (as 3.4 did with ConnectResponse's
// readOnly). It returns an error wrapping ErrMalformed.
func Unmarshal(buf []byte, recs ...Decodable) error {
	d := Decoder{buf: buf}
	for _, r := range recs {
		r.Decode(&d)
	}
	return d.err
}
