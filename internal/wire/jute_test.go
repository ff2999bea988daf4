package wire

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// The primitives encode as jute's BinaryOutputArchive writes them.
func TestEncoderPrimitives(t *testing.T) {
	var e Encoder
	e.Int32(-2)
	e.Int64(0x0102030405060708)
	e.Bool(true)
	e.Bool(false)
	e.Buffer(nil)
	e.Buffer([]byte{})
	e.Buffer([]byte("ab"))
	e.String("")
	e.String("é")
	e.Strings(nil)
	e.Strings([]string{"x"})
	want := []byte{
		0xff, 0xff, 0xff, 0xfe, // int -2
		1, 2, 3, 4, 5, 6, 7, 8, // long
		1, 0, // booleans
		0xff, 0xff, 0xff, 0xff, // null buffer
		0, 0, 0, 0, // empty buffer
		0, 0, 0, 2, 'a', 'b',
		0, 0, 0, 0, // empty string
		0, 0, 0, 2, 0xc3, 0xa9, // UTF-8 bytes
		0, 0, 0, 0, // empty vector
		0, 0, 0, 1, 0, 0, 0, 1, 'x',
	}
	if !bytes.Equal(e.Bytes(), want) {
		t.Fatalf("encoded\n% x\nwant\n% x", e.Bytes(), want)
	}

	d := NewDecoder(want)
	if v := d.Int32(); v != -2 {
		t.Errorf("Int32 = %d", v)
	}
	if v := d.Int64(); v != 0x0102030405060708 {
		t.Errorf("Int64 = %x", v)
	}
	if !d.Bool() || d.Bool() {
		t.Error("Bool: want true then false")
	}
	if b := d.Buffer(); b != nil {
		t.Errorf("null buffer decoded as %v, want nil", b)
	}
	if b := d.Buffer(); b == nil || len(b) != 0 {
		t.Errorf("empty buffer decoded as %#v, want empty and non-nil", b)
	}
	if b := d.Buffer(); string(b) != "ab" {
		t.Errorf("Buffer = %q", b)
	}
	if s := d.String(); s != "" {
		t.Errorf("String = %q", s)
	}
	if s := d.String(); s != "é" {
		t.Errorf("String = %q", s)
	}
	if v := d.Strings(); v != nil {
		t.Errorf("empty vector = %#v, want nil", v)
	}
	if v := d.Strings(); len(v) != 1 || v[0] != "x" {
		t.Errorf("Strings = %q", v)
	}
	if d.Err() != nil || d.Len() != 0 {
		t.Fatalf("Err = %v, %d bytes left", d.Err(), d.Len())
	}
}

// A decoded buffer is a copy: reusing the input does not change it.
func TestDecoderCopiesBuffers(t *testing.T) {
	in := []byte{0, 0, 0, 2, 'a', 'b'}
	d := NewDecoder(in)
	b := d.Buffer()
	in[4] = 'z'
	if string(b) != "ab" {
		t.Fatalf("buffer changed with its input: %q", b)
	}
}

// Bad lengths, counts and short input are errors wrapping ErrMalformed,
// the first one is kept, and later reads return zero values.
func TestDecoderMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		read func(d *Decoder) any
	}{
		{"short int", []byte{0, 0, 1}, func(d *Decoder) any { return d.Int32() }},
		{"short long", []byte{0, 0, 0, 0, 0, 0, 1}, func(d *Decoder) any { return d.Int64() }},
		{"missing bool", nil, func(d *Decoder) any { return d.Bool() }},
		{"negative buffer length", []byte{0xff, 0xff, 0xff, 0xfe}, func(d *Decoder) any { return d.Buffer() }},
		{"buffer longer than input", []byte{0, 0, 0, 3, 'a', 'b'}, func(d *Decoder) any { return d.Buffer() }},
		{"huge buffer", []byte{0x7f, 0xff, 0xff, 0xff}, func(d *Decoder) any { return d.Buffer() }},
		{"huge string", []byte{0x7f, 0xff, 0xff, 0xff, 'a'}, func(d *Decoder) any { return d.String() }},
		{"negative vector count", []byte{0x80, 0, 0, 0}, func(d *Decoder) any { return d.Strings() }},
		{"vector count beyond input", []byte{0, 0, 0, 2, 0, 0, 0, 0}, func(d *Decoder) any { return d.Strings() }},
		{"huge ACL vector", []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}, func(d *Decoder) any {
			return decodeVector[ACL](d, "vector<ACL>", aclMinSize)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder(tc.in)
			tc.read(d)
			first := d.Err()
			if !errors.Is(first, ErrMalformed) {
				t.Fatalf("Err = %v, want ErrMalformed", first)
			}
			if v := d.Int32(); v != 0 || d.Err() != first {
				t.Fatalf("after a failure: Int32 = %d, Err = %v (first %v)", v, d.Err(), first)
			}
		})
	}
}

// A length or count claiming all of memory costs no allocation beyond the
// small input: it is refused before anything is allocated.
func TestDecoderDoesNotAllocateForDeclaredLengths(t *testing.T) {
	inputs := [][]byte{
		{0x7f, 0xff, 0xff, 0xff},                   // buffer
		{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0}, // vector
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 100; i++ {
		for _, in := range inputs {
			var r GetChildrenResponse
			if err := Unmarshal(in, &r); err == nil {
				t.Fatal("no error")
			}
			var b GetDataResponse
			if err := Unmarshal(in, &b); err == nil {
				t.Fatal("no error")
			}
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("refusing 400 bad lengths allocated %d bytes", n)
	}
}

// Unmarshal reads records in order and ignores what follows the last one;
// Marshal appends.
func TestMarshalUnmarshal(t *testing.T) {
	h := RequestHeader{Xid: 7, Type: OpGetData}
	r := GetDataRequest{Path: "/a", Watch: true}
	b := Marshal([]byte{9}, &h, &r)
	if b[0] != 9 {
		t.Fatal("Marshal did not append")
	}
	var h2 RequestHeader
	var r2 GetDataRequest
	if err := Unmarshal(append(b[1:], 1, 2, 3), &h2, &r2); err != nil {
		t.Fatal(err)
	}
	if h2 != h || r2 != r {
		t.Fatalf("got %+v %+v, want %+v %+v", h2, r2, h, r)
	}
	if err := Unmarshal(b[1:len(b)-1], &h2, &r2); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated: err = %v, want ErrMalformed", err)
	}
}
