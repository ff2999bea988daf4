package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxBuffer is ZooKeeper's default jute.maxbuffer (0xfffff bytes): the
// largest frame a server accepts from a client and the largest a Java
// client accepts from a server. Node data can be nearly that large, so a
// getData reply is that plus the headers around it.
const MaxBuffer = 0xfffff

// DefaultMaxFrame is the largest frame a FrameReader accepts unless told
// otherwise: MaxBuffer plus 1 KiB, the headroom jute's BinaryInputArchive
// long gave the fields around a buffer. It holds the reply to a getData of
// the largest node a default server stores. Servers run with a larger
// jute.maxbuffer need a larger maximum here too.
const DefaultMaxFrame = MaxBuffer + 1024

// ErrFrameTooLarge is wrapped by the error for a frame longer than the
// maximum. On reading, the connection is then of no further use: the
// frame's bytes were not consumed.
var ErrFrameTooLarge = errors.New("wire: frame too large")

// FrameReader reads frames: an int32 length and that many bytes.
type FrameReader struct {
	r     io.Reader
	max   int
	hdr   [4]byte
	buf   []byte
	large int // the length of a frame refused as too large, 0 when none
}

// NewFrameReader returns a FrameReader reading r, refusing frames longer
// than max bytes (DefaultMaxFrame if max <= 0).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &FrameReader{r: r, max: max}
}

// ReadFrame returns the next frame's bytes, without the length. They stay
// valid until the next call (decoders copy what they keep). At a clean end
// of the stream, before a frame's first byte, it returns io.EOF; within a
// frame io.ErrUnexpectedEOF. A negative length is an error wrapping
// ErrMalformed, one above the maximum an error wrapping ErrFrameTooLarge;
// the bytes of such a frame are not read.
func (f *FrameReader) ReadFrame() ([]byte, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(f.hdr[:]))
	switch {
	case n < 0:
		return nil, fmt.Errorf("%w: negative frame length %d", ErrMalformed, n)
	case int64(n) > int64(f.max):
		f.large = int(n)
		return nil, fmt.Errorf("%w: %d bytes, at most %d accepted", ErrFrameTooLarge, n, f.max)
	}
	f.large = 0
	if cap(f.buf) < int(n) {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return f.buf, nil
}

// Discard reads past the frame the last ReadFrame refused as too large,
// keeping at most its first keep bytes (a reply's header, say), which it
// returns; the stream is then at the next frame. With no such frame it
// returns nil.
func (f *FrameReader) Discard(keep int) ([]byte, error) {
	n := f.large
	if n == 0 {
		return nil, nil
	}
	f.large = 0
	head := make([]byte, min(keep, n))
	if _, err := io.ReadFull(f.r, head); err != nil {
		return nil, err
	}
	if _, err := io.CopyN(io.Discard, f.r, int64(n-len(head))); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return head, nil
}

// AppendFrame appends a frame holding the records in order (for a request,
// a RequestHeader and the request's record; for the first frame of a
// connection, the ConnectRequest alone). It returns an error wrapping
// ErrFrameTooLarge, and buf unchanged, when the frame's body would be
// longer than max (MaxBuffer if max <= 0: a server closes the connection
// on a frame longer than its jute.maxbuffer).
func AppendFrame(buf []byte, max int, recs ...Encodable) ([]byte, error) {
	if max <= 0 {
		max = MaxBuffer
	}
	start := len(buf)
	e := Encoder{buf: append(buf, 0, 0, 0, 0)}
	for _, r := range recs {
		r.Encode(&e)
	}
	n := len(e.buf) - start - 4
	if n > max {
		return buf[:start], fmt.Errorf("%w: %d bytes, at most %d accepted", ErrFrameTooLarge, n, max)
	}
	binary.BigEndian.PutUint32(e.buf[start:], uint32(n))
	return e.buf, nil
}

// FrameWriter writes frames, each with one Write call.
type FrameWriter struct {
	w   io.Writer
	max int
	buf []byte
}

// NewFrameWriter returns a FrameWriter writing to w, refusing frames longer
// than max bytes (MaxBuffer if max <= 0: a server closes the connection on
// a frame longer than its jute.maxbuffer).
func NewFrameWriter(w io.Writer, max int) *FrameWriter {
	if max <= 0 {
		max = MaxBuffer
	}
	return &FrameWriter{w: w, max: max}
}

// WriteFrame writes one frame holding the records in order. A frame too
// large is not written: the error wraps ErrFrameTooLarge and the stream is
// still usable.
func (f *FrameWriter) WriteFrame(recs ...Encodable) error {
	b, err := AppendFrame(f.buf[:0], f.max, recs...)
	if err != nil {
		return err
	}
	f.buf = b
	_, err = f.w.Write(b)
	return err
}
