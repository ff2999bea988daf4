package alloc

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	clients := []string{"a", "b", "c"}
	resources := []string{"r1", "r2", "r3"}
	tests := []struct {
		name string
		a    Assignment
		want Assignment
		err  string
	}{
		{name: "unbalanced is fine", a: Assignment{"a": {"r3", "r1", "r2"}},
			want: Assignment{"a": {"r1", "r2", "r3"}, "b": {}, "c": {}}},
		{name: "unknown client owning nothing", a: Assignment{"a": {"r1"}, "b": {"r2"}, "c": {"r3"}, "d": {}},
			err: `unknown client "d"`},
		{name: "unknown client", a: Assignment{"a": {"r1", "r2"}, "x": {"r3"}}, err: `unknown client "x" owns 1 resources (r3)`},
		{name: "unknown resource", a: Assignment{"a": {"r1", "r2", "r3", "r9"}}, err: `owns unknown resource "r9"`},
		{name: "twice", a: Assignment{"a": {"r1", "r2"}, "b": {"r2", "r3"}}, err: `resource "r2" owned by both "a" and "b"`},
		{name: "twice in a list", a: Assignment{"a": {"r1", "r2", "r3", "r1"}}, err: `client "a" lists resource "r1" twice`},
		{name: "missing", a: Assignment{"a": {"r1"}}, err: "2 of 3 resources unowned: r2, r3"},
		{name: "nil", a: nil, err: "3 of 3 resources unowned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.a.Clone()
			got, err := Validate(tt.a, clients, resources)
			if !reflect.DeepEqual(tt.a, before) {
				t.Fatalf("Validate modified its argument: %v", tt.a)
			}
			if tt.err != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.err) || got != nil {
					t.Fatalf("got %v, %v; want an ErrInvalid with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if got, err := Validate(nil, nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("nothing: %v, %v", got, err)
	}
}

func TestRun(t *testing.T) {
	in := Input{Prev: Assignment{"a": {"r1"}}, Clients: []string{"a", "b"}, Resources: []string{"r1", "r2"},
		ClientWeights: Weights{"a": 2}}
	allToFirst := func(in Input) (Assignment, error) {
		return Assignment{in.Clients[0]: in.Resources}, nil
	}
	got, err := Run(allToFirst, in)
	if err != nil || !reflect.DeepEqual(got, Assignment{"a": {"r1", "r2"}, "b": {}}) {
		t.Fatalf("got %v, %v", got, err)
	}
	// What the function does to its input does not change the check.
	vandal := func(in Input) (Assignment, error) {
		in.Clients[0], in.Resources[0] = "zz", "r9"
		in.Prev["a"][0] = "r9"
		in.ClientWeights["a"] = 7
		return Assignment{"zz": {"r9", "r2"}}, nil
	}
	if _, err := Run(vandal, in); !errors.Is(err, ErrInvalid) {
		t.Fatalf("vandal: %v", err)
	}
	if in.Clients[0] != "a" || in.Resources[0] != "r1" || in.Prev["a"][0] != "r1" || in.ClientWeights["a"] != 2 {
		t.Fatalf("input modified: %+v", in)
	}
	boom := errors.New("boom")
	if _, err := Run(func(Input) (Assignment, error) { return nil, boom }, in); !errors.Is(err, boom) {
		t.Fatalf("error: %v", err)
	}
	if _, err := Run(func(Input) (Assignment, error) { panic("oops") }, in); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "oops") {
		t.Fatalf("panic: %v", err)
	}
}

// FuzzValidate compares Validate with the test's own count of owners: a
// result is accepted exactly when every listed client is known and every
// resource is listed once, and then it is the input, normalised.
func FuzzValidate(f *testing.F) {
	f.Add([]byte{}, uint8(3), uint8(5))
	f.Add([]byte{0, 1, 2, 3, 4}, uint8(3), uint8(5))
	f.Add([]byte{0, 1, 1, 3, 200}, uint8(2), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, n, m uint8) {
		n, m = n%16, m%32
		clients := ids("c", int(n), 2)
		resources := ids("r", int(m), 2)
		// Byte i lists resource i%40 (beyond m: unknown) under client
		// b%20 (beyond n: unknown).
		a := Assignment{}
		for i, b := range data {
			c := fmt.Sprintf("c%02d", int(b)%20)
			a[c] = append(a[c], fmt.Sprintf("r%02d", i%40))
		}
		count := map[string]int{}
		ok := true
		for c, rs := range a {
			if int(c[1]-'0')*10+int(c[2]-'0') >= int(n) {
				ok = false
			}
			for _, r := range rs {
				if int(r[1]-'0')*10+int(r[2]-'0') >= int(m) {
					ok = false
				}
				count[r]++
			}
		}
		for _, r := range resources {
			if count[r] != 1 {
				ok = false
			}
		}
		got, err := Validate(a, clients, resources)
		if (err == nil) != ok {
			t.Fatalf("Validate(%v, %d clients, %d resources) = %v; oracle says ok=%v", a, n, m, err, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if !got.Equal(a) || len(got) != int(n) {
			t.Fatalf("normalised %v differs from %v", got, a)
		}
		for _, c := range clients {
			if got[c] == nil {
				t.Fatalf("client %s missing", c)
			}
		}
	})
}

func TestCovers(t *testing.T) {
	clients := []string{"a", "b"}
	resources := []string{"r1", "r2"}
	for _, tt := range []struct {
		a    Assignment
		want bool
	}{
		{Assignment{"a": {"r1", "r2"}}, true},
		{Assignment{"a": {"r1"}, "b": {"r2"}, "gone": {}}, true},
		{Assignment{"a": {"r1"}, "gone": {"r2"}}, false},
		{Assignment{"a": {"r1", "r2"}, "b": {"r2"}}, false},
		{Assignment{"a": {"r1"}}, false},
		{Assignment{"a": {"r1", "r2", "r3"}}, false},
	} {
		if got := tt.a.Covers(clients, resources); got != tt.want {
			t.Errorf("%v.Covers = %v, want %v", tt.a, got, tt.want)
		}
	}
}
