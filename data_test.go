package zkcoord_test

import (
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord"
)

// DecodeJSON: empty data is the zero value, JSON is decoded, anything else
// is ErrBadData naming the node.
func TestDecodeJSON(t *testing.T) {
	type rec struct {
		N int `json:"n"`
	}
	if r, err := zkcoord.DecodeJSON[rec](nil, "x"); err != nil || r != (rec{}) {
		t.Fatalf("empty: %+v, %v", r, err)
	}
	if r, err := zkcoord.DecodeJSON[rec]([]byte(`{"n":3}`), "x"); err != nil || r.N != 3 {
		t.Fatalf("JSON: %+v, %v", r, err)
	}
	for _, bad := range []string{"host:1234", `{"n":"3"}`, `{"n":3`, "\x00"} {
		r, err := zkcoord.DecodeJSON[rec]([]byte(bad), "the node")
		if !errors.Is(err, zkcoord.ErrBadData) || r != (rec{}) {
			t.Errorf("%q: %+v, %v, want ErrBadData", bad, r, err)
		}
	}
}
