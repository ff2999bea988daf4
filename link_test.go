package zkcoord

import (
	"encoding/binary"
	"slices"
	"testing"
)

func frameBytes(xid int32, body int) []byte {
	b := make([]byte, 8+body)
	binary.BigEndian.PutUint32(b, uint32(4+body))
	binary.BigEndian.PutUint32(b[4:], uint32(xid))
	return b
}

// The scanner must find every frame whatever the chunking of the stream.
func TestFrameScannerChunking(t *testing.T) {
	var stream []byte
	want := []int32{0, 5, -1, -2, 7, -1, 1 << 30}
	for i, xid := range want {
		stream = append(stream, frameBytes(xid, i*37)...)
	}
	for chunk := 1; chunk <= len(stream); chunk++ {
		var f frameScanner
		var got []int32
		for i := 0; i < len(stream); i += chunk {
			f.feed(stream[i:min(i+chunk, len(stream))], func(x int32) { got = append(got, x) })
		}
		if !slices.Equal(got, want) {
			t.Fatalf("chunk %d: xids %v, want %v", chunk, got, want)
		}
	}
}

func FuzzFrameScanner(f *testing.F) {
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 1}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var whole, split frameScanner
		var a, b []int32
		whole.feed(data, func(x int32) { a = append(a, x) })
		c := int(chunk%16) + 1
		for i := 0; i < len(data); i += c {
			split.feed(data[i:min(i+c, len(data))], func(x int32) { b = append(b, x) })
		}
		if !slices.Equal(a, b) {
			t.Fatalf("chunking changed the frames: %v vs %v", a, b)
		}
	})
}
