package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// Frames written by a FrameWriter read back, in order, through a reader
// that delivers one byte at a time; the stream ends with io.EOF.
func TestFramesRoundTrip(t *testing.T) {
	var stream bytes.Buffer
	w := NewFrameWriter(&stream, 0)
	h := RequestHeader{Xid: 1, Type: OpGetData}
	r := GetDataRequest{Path: "/a"}
	if err := w.WriteFrame(&h, &r); err != nil {
		t.Fatal(err)
	}
	ping := RequestHeader{Xid: XidPing, Type: OpPing}
	if err := w.WriteFrame(&ping); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(); err != nil { // an empty frame
		t.Fatal(err)
	}

	fr := NewFrameReader(iotest.OneByteReader(&stream), 0)
	b, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	var h2 RequestHeader
	var r2 GetDataRequest
	if err := Unmarshal(b, &h2, &r2); err != nil || h2 != h || r2 != r {
		t.Fatalf("first frame: %+v %+v %v", h2, r2, err)
	}
	if b, err = fr.ReadFrame(); err != nil || !bytes.Equal(b, Marshal(nil, &ping)) {
		t.Fatalf("second frame: % x, %v", b, err)
	}
	if b, err = fr.ReadFrame(); err != nil || len(b) != 0 {
		t.Fatalf("empty frame: % x, %v", b, err)
	}
	if _, err = fr.ReadFrame(); err != io.EOF {
		t.Fatalf("at the end: err = %v, want io.EOF", err)
	}
}

// A negative or oversized length is refused before its bytes are read or
// allocated; a stream cut inside a frame is io.ErrUnexpectedEOF.
func TestFrameReaderRefusesBadLengths(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		max  int
		want error
	}{
		{"negative length", []byte{0xff, 0xff, 0xff, 0xff}, 0, ErrMalformed},
		{"above the default maximum", []byte{0, 0x10, 0x04, 0x00}, 0, ErrFrameTooLarge},
		{"above a configured maximum", []byte{0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 8, ErrFrameTooLarge},
		{"huge", []byte{0x7f, 0xff, 0xff, 0xff}, 0, ErrFrameTooLarge},
		{"cut in the length", []byte{0, 0}, 0, io.ErrUnexpectedEOF},
		{"cut in the body", []byte{0, 0, 0, 3, 1}, 0, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFrameReader(bytes.NewReader(tc.in), tc.max).ReadFrame()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// The default maximum itself is accepted.
	in := append([]byte{0, 0x10, 0x03, 0xff}, make([]byte, DefaultMaxFrame)...)
	if b, err := NewFrameReader(bytes.NewReader(in), 0).ReadFrame(); err != nil || len(b) != DefaultMaxFrame {
		t.Fatalf("frame of DefaultMaxFrame bytes: %d bytes, %v", len(b), err)
	}
}

// A frame above the writer's maximum is not written, and the stream stays
// usable for the next frame.
func TestFrameWriterRefusesOversizedFrames(t *testing.T) {
	var stream bytes.Buffer
	w := NewFrameWriter(&stream, 64)
	big := SetDataRequest{Path: "/a", Data: make([]byte, 100)}
	if err := w.WriteFrame(&big); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if stream.Len() != 0 {
		t.Fatalf("%d bytes written for a refused frame", stream.Len())
	}
	small := SyncRequest{Path: "/a"}
	if err := w.WriteFrame(&small); err != nil {
		t.Fatal(err)
	}
	b, err := NewFrameReader(&stream, 64).ReadFrame()
	var got SyncRequest
	if err != nil || Unmarshal(b, &got) != nil || got != small {
		t.Fatalf("after a refused frame: %+v, %v", got, err)
	}

	// By default a frame may be as long as the server's jute.maxbuffer.
	var sink bytes.Buffer
	if err := NewFrameWriter(&sink, 0).WriteFrame(&rawRecord{make([]byte, MaxBuffer)}); err != nil {
		t.Fatalf("frame of MaxBuffer bytes: %v", err)
	}
	if err := NewFrameWriter(&sink, 0).WriteFrame(&rawRecord{make([]byte, MaxBuffer+1)}); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("frame of MaxBuffer+1 bytes: err = %v, want ErrFrameTooLarge", err)
	}

	prefix := []byte{1, 2, 3}
	out, err := AppendFrame(prefix, 64, &big)
	if !errors.Is(err, ErrFrameTooLarge) || !bytes.Equal(out, prefix) {
		t.Fatalf("AppendFrame: % x, %v; want the buffer unchanged and ErrFrameTooLarge", out, err)
	}
}

// FuzzFrameReader reads arbitrary streams: every frame it returns is no
// longer than the maximum and than what the stream held, and every error
// is a bad length or the stream's end.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 7, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 256
		fr := NewFrameReader(bytes.NewReader(in), max)
		read := 0
		for {
			b, err := fr.ReadFrame()
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			read += 4 + len(b)
			if len(b) > max || read > len(in) {
				t.Fatalf("frame of %d bytes, %d read from %d", len(b), read, len(in))
			}
		}
	})
}

// rawRecord encodes as its bytes, to make frames of an exact size.
type rawRecord struct{ b []byte }

func (r *rawRecord) Encode(e *Encoder) { e.buf = append(e.buf, r.b...) }

// A frame refused as too large can be skipped, keeping its head, and the
// next frame is read as usual.
func TestDiscardTooLargeFrame(t *testing.T) {
	var stream []byte
	stream, _ = AppendFrame(stream, 0, &ReplyHeader{Xid: 7, Zxid: 9}, &GetDataResponse{Data: make([]byte, 100)})
	stream, _ = AppendFrame(stream, 0, &ReplyHeader{Xid: 8})
	fr := NewFrameReader(bytes.NewReader(stream), 50)
	if _, err := fr.ReadFrame(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("ReadFrame: %v, want ErrFrameTooLarge", err)
	}
	head, err := fr.Discard(16)
	if err != nil {
		t.Fatal(err)
	}
	var h ReplyHeader
	if err := Unmarshal(head, &h); err != nil || h.Xid != 7 || h.Zxid != 9 {
		t.Fatalf("kept head %+v, %v", h, err)
	}
	b, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if err := Unmarshal(b, &h); err != nil || h.Xid != 8 {
		t.Fatalf("the next frame: %+v, %v", h, err)
	}
	if head, err := fr.Discard(16); head != nil || err != nil {
		t.Fatalf("Discard with nothing refused: %v, %v", head, err)
	}
}
