//go:build unix

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord"
)

// Entries in zkCli.sh's syntax parse into the ACL the server stores, and
// print back as they were written (permissions in cdrwa order).
func TestParseACL(t *testing.T) {
	hash := zkcoord.DigestACL(0, "alice", "secret")[0].ID
	for _, c := range []struct {
		in, out string
		want    zkcoord.ACL
	}{
		{"world:anyone:cdrwa", "", zkcoord.ACL{Scheme: "world", ID: "anyone", Perms: zkcoord.PermAll}},
		{"world:anyone:rw", "", zkcoord.ACL{Scheme: "world", ID: "anyone", Perms: zkcoord.PermRead | zkcoord.PermWrite}},
		{"world:anyone:ar", "world:anyone:ra", zkcoord.ACL{Scheme: "world", ID: "anyone", Perms: zkcoord.PermRead | zkcoord.PermAdmin}},
		{"auth::cdrwa", "", zkcoord.ACL{Scheme: "auth", ID: "", Perms: zkcoord.PermAll}},
		{"digest:" + hash + ":r", "", zkcoord.ACL{Scheme: "digest", ID: hash, Perms: zkcoord.PermRead}},
		{"ip:1.2.3.4:r", "", zkcoord.ACL{Scheme: "ip", ID: "1.2.3.4", Perms: zkcoord.PermRead}},
		{"ip:10.0.0.0/8:cd", "", zkcoord.ACL{Scheme: "ip", ID: "10.0.0.0/8", Perms: zkcoord.PermCreate | zkcoord.PermDelete}},
		{"ip:::1:r", "", zkcoord.ACL{Scheme: "ip", ID: "::1", Perms: zkcoord.PermRead}},
		{"x509:CN=a,O=b:r", "", zkcoord.ACL{Scheme: "x509", ID: "CN=a,O=b", Perms: zkcoord.PermRead}},
	} {
		got, err := parseACL(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseACL(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		out := c.out
		if out == "" {
			out = c.in
		}
		if s := formatACL(got); s != out {
			t.Errorf("formatACL(parseACL(%q)) = %q, want %q", c.in, s, out)
		}
	}
	for _, bad := range []string{"", "world", "world:anyone", ":anyone:r", "world:anyone:", "world:anyone:rx",
		"world:someone:r", "digest:alice:r", "digest:alice:secret:r", "digest::" + strings.Repeat("A", 28) + ":r",
		"ip:host.example:r", "ip:1.2.3.4/99:r", "sasl::r"} {
		if got, err := parseACL(bad); err == nil {
			t.Errorf("parseACL(%q) = %+v, want an error", bad, got)
		}
	}
}

// Data is shown on a terminal as text when it shows as itself, escaped
// when it has control or invisible characters, as a hex dump when it is
// not UTF-8; the escaped form reads back unambiguously.
func TestShowData(t *testing.T) {
	for _, c := range []struct {
		data  string
		form  dataForm
		shown string
	}{
		{"", formText, ""},
		{"hello", formText, "hello\n"},
		{"a\tb\nc\n", formText, "a\tb\nc\n"},
		{"windows\r\nlines\r\n", formText, "windows\r\nlines\r\n"},
		{"grüße, 世界", formText, "grüße, 世界\n"},
		{`C:\dir`, formText, "C:\\dir\n"},
		{"\x1b[31mred", formEscaped, `\x1b[31mred` + "\n"},
		{"secret\rpublic", formEscaped, `secret\rpublic` + "\n"},
		{`a\b` + "\x00", formEscaped, `a\\b\x00` + "\n"},
		{"abc\u202etxt.exe", formEscaped, `abc\u202etxt.exe` + "\n"},
		{"zero\u200bwidth\nline", formEscaped, "zero\\u200bwidth\nline\n"},
		{"\xff\xfe", formHex, "00000000  ff fe                                             |..|\n"},
	} {
		if f := formOf([]byte(c.data)); f != c.form {
			t.Errorf("formOf(%q) = %d, want %d", c.data, f, c.form)
		}
		var out, notes bytes.Buffer
		showData(&out, &notes, []byte(c.data))
		if out.String() != c.shown {
			t.Errorf("showData(%q) wrote %q, want %q", c.data, out.String(), c.shown)
		}
		if (notes.Len() > 0) != (c.form != formText) {
			t.Errorf("showData(%q) noted %q", c.data, notes.String())
		}
	}
	if got := escapeText("a\xffb"); got != `a\xffb` {
		t.Errorf("escapeText of a byte that is not UTF-8: %q", got)
	}
	if got := shownName("/a/\u202eb", true); got != `/a/\u202eb` {
		t.Errorf("shownName on a terminal: %q", got)
	}
	if got := shownName("/a/\u202eb", false); got != "/a/\u202eb" {
		t.Errorf("shownName elsewhere: %q", got)
	}
}

// Paths sort depth first, a parent before its children.
func TestComparePaths(t *testing.T) {
	paths := []string{"/a-b", "/a/c", "/b", "/", "/a", "/a/b/c", "/a/b"}
	slices.SortFunc(paths, comparePaths)
	if want := []string{"/", "/a", "/a/b", "/a/b/c", "/a/c", "/a-b", "/b"}; !slices.Equal(paths, want) {
		t.Errorf("sorted: %q, want %q", paths, want)
	}
}
