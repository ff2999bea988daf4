package wire

import (
	"errors"
	"reflect"
	"testing"
)

// The fuzz tests feed arbitrary bytes to every decoder, one family of
// records per test; the first byte picks the record. Decoding must return
// a value or an error wrapping ErrMalformed, never panic, keep no more
// memory than a small multiple of the input, and a decoded value must
// encode to bytes that decode to the same value. The seeds, which run
// under a plain go test, are the encodings of the records of
// TestRoundTrip, whole and cut short.

var (
	sessionFamily = []Record{
		&ConnectRequest{}, &ConnectResponse{}, &RequestHeader{}, &ReplyHeader{},
		&AuthPacket{}, &SASLToken{}, &WhoAmIResponse{}, &ErrorResponse{},
	}
	dataFamily = []Record{&ID{}, &ACL{}, &Stat{}, &ClientInfo{}}
	nodeFamily = []Record{
		&CreateRequest{}, &CreateTTLRequest{}, &PathRecord{}, &Create2Response{},
		&VersionRequest{}, &ReadRequest{}, &StatResponse{},
		&GetDataResponse{}, &SetDataRequest{}, &GetChildrenResponse{},
		&GetChildren2Response{}, &GetACLResponse{}, &SetACLRequest{},
		&GetEphemeralsRequest{}, &GetEphemeralsResponse{},
		&GetAllChildrenNumberResponse{}, &ReconfigRequest{},
	}
	watchFamily = []Record{
		&WatcherEvent{}, &SetWatches{}, &SetWatches2{}, &AddWatchRequest{},
		&WatchesRequest{},
	}
	multiFamily = []Record{&MultiHeader{}, &MultiRequest{}, &MultiResponse{}}
)

// Every record of TestRoundTrip belongs to exactly one fuzzed family (a
// record with several names, such as ReadRequest or PathRecord, is listed
// once).
func TestFuzzFamiliesCoverAllRecords(t *testing.T) {
	in := map[reflect.Type]int{}
	for _, fam := range [][]Record{sessionFamily, dataFamily, nodeFamily, watchFamily, multiFamily} {
		for _, r := range fam {
			in[reflect.TypeOf(r)]++
		}
	}
	for _, r := range records() {
		if n := in[reflect.TypeOf(r)]; n != 1 {
			t.Errorf("%T is in %d fuzzed families", r, n)
		}
	}
}

func FuzzDecodeSession(f *testing.F) { fuzzFamily(f, sessionFamily) }
func FuzzDecodeData(f *testing.F)    { fuzzFamily(f, dataFamily) }
func FuzzDecodeNode(f *testing.F)    { fuzzFamily(f, nodeFamily) }
func FuzzDecodeWatch(f *testing.F)   { fuzzFamily(f, watchFamily) }
func FuzzDecodeMulti(f *testing.F)   { fuzzFamily(f, multiFamily) }

func fuzzFamily(f *testing.F, family []Record) {
	for _, r := range records() {
		for i, k := range family {
			if reflect.TypeOf(k) != reflect.TypeOf(r) {
				continue
			}
			b := Marshal(nil, r)
			f.Add(append([]byte{byte(i)}, b...))
			f.Add(append([]byte{byte(i)}, b[:len(b)/2]...))
		}
	}
	// Lengths and counts that claim more than there is.
	f.Add([]byte{0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xfe})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		proto := family[int(in[0])%len(family)]
		in = in[1:]
		got := newOf(proto)
		d := NewDecoder(in)
		got.Decode(d)
		if err := d.Err(); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("%T: error %v does not wrap ErrMalformed", got, err)
			}
			return
		}
		if kept, limit := retained(reflect.ValueOf(got).Elem()), 64*len(in)+64; kept > limit {
			t.Fatalf("%T: %d input bytes decoded to a value holding %d bytes", got, len(in), kept)
		}
		again := newOf(proto)
		if err := Unmarshal(Marshal(nil, got), again); err != nil {
			t.Fatalf("%T: re-encoded value does not decode: %v", got, err)
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("%T: re-encoded value decodes to\n%+v\nwant\n%+v", got, again, got)
		}
	})
}

// retained estimates the memory a decoded value holds: its own size and
// what its slices and strings point to.
func retained(v reflect.Value) int {
	n := int(v.Type().Size())
	return n + pointed(v)
}

func pointed(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		n := v.Cap() * int(v.Type().Elem().Size())
		for i := 0; i < v.Len(); i++ {
			n += pointed(v.Index(i))
		}
		return n
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField(); i++ {
			n += pointed(v.Field(i))
		}
		return n
	}
	return 0
}
