package zkconn

import (
	"strings"
	"testing"
)

// The example exchange of RFC 2831 section 4: the response and the
// rspauth it gives, and a server proof that does not match.
func TestDigestMD5RFCExample(t *testing.T) {
	m := NewDigestMD5("chris", "secret")
	m.uri, m.cnonce = "imap/elwood.innosoft.com", "OA6MHXh6VqTrRk"
	resp, done, err := m.Next([]byte(`realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`))
	if err != nil || done {
		t.Fatalf("Next(challenge) = %q, %v, %v", resp, done, err)
	}
	kv, err := parseDigest(string(resp))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"username": "chris", "realm": "elwood.innosoft.com", "nonce": "OA6MG9tEQGm2hh",
		"cnonce": "OA6MHXh6VqTrRk", "nc": "00000001", "qop": "auth",
		"digest-uri": "imap/elwood.innosoft.com", "response": "d388dad90d4bbd760a152321f2143af7",
		"charset": "utf-8",
	} {
		if got := kv[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q (response %s)", k, got, want, resp)
		}
	}
	bad := *m
	if _, _, err := bad.Next([]byte("rspauth=00000000000000000000000000000000")); err == nil {
		t.Error("a wrong rspauth was accepted")
	}
	if tok, done, err := m.Next([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd")); err != nil || !done || tok != nil {
		t.Fatalf("Next(rspauth) = %q, %v, %v; want the end", tok, done, err)
	}
}

func TestDigestMD5RefusesWhatItCannotAnswer(t *testing.T) {
	for _, c := range []struct{ name, challenge, want string }{
		{"no challenge", "", "no DIGEST-MD5 challenge"},
		{"no nonce", `realm="r",qop="auth",algorithm=md5-sess`, "without a nonce"},
		{"no auth qop", `nonce="n",qop="auth-conf",algorithm=md5-sess`, "not auth"},
		{"other algorithm", `nonce="n",qop="auth",algorithm=md5`, "algorithm"},
		{"unterminated", `nonce="n`, "unterminated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := NewDigestMD5("u", "p").Next([]byte(c.challenge))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Next(%q) = %v; want an error saying %q", c.challenge, err, c.want)
			}
		})
	}
}
