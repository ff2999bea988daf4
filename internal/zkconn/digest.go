package zkconn

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The digest-uri ZooKeeper's server expects: its SaslServer is made for
// the protocol "zookeeper" on the server name "zk-sasl-md5", whatever
// the host, and ZooKeeper's client asks for the same.
const digestURI = "zookeeper/zk-sasl-md5"

// DigestMD5 is the client side of one SASL DIGEST-MD5 exchange (RFC
// 2831), authentication only (qop "auth"), as the JDK's SaslServer behind
// ZooKeeper's DigestLoginModule expects it: the server's challenge is
// answered with the response the password proves, and the server's
// rspauth, which proves the server knows the password too, is checked.
// Its Next is a SASLStep; the exchange has no initial response.
type DigestMD5 struct {
	user, password string
	uri            string // digestURI, but for a test
	cnonce         string // set by the first step, or before it by a test
	step           int
	rspauth        string // the server's proof expected
}

// NewDigestMD5 returns a new exchange for user and password.
func NewDigestMD5(user, password string) *DigestMD5 {
	return &DigestMD5{user: user, password: password, uri: digestURI}
}

// Next answers the server's token: the challenge, then the rspauth.
func (m *DigestMD5) Next(token []byte) ([]byte, bool, error) {
	switch m.step {
	case 0:
		m.step++
		if len(token) == 0 {
			return nil, false, errors.New("the server sent no DIGEST-MD5 challenge (is SASL enabled on it?)")
		}
		resp, err := m.respond(string(token))
		return resp, false, err
	case 1:
		m.step++
		kv, err := parseDigest(string(token))
		if err != nil {
			return nil, false, err
		}
		got := kv["rspauth"]
		if len(got) != 1 || subtle.ConstantTimeCompare([]byte(got[0]), []byte(m.rspauth)) != 1 {
			return nil, false, errors.New("the server's rspauth does not prove it knows the password")
		}
		return nil, true, nil
	}
	return nil, false, errors.New("DIGEST-MD5: a token after the exchange ended")
}

// respond computes the digest-response to a digest-challenge (RFC 2831
// 2.1.2) and the rspauth the server must send back.
func (m *DigestMD5) respond(challenge string) ([]byte, error) {
	kv, err := parseDigest(challenge)
	if err != nil {
		return nil, err
	}
	one := func(k string) (string, error) {
		switch v := kv[k]; len(v) {
		case 0:
			return "", nil
		case 1:
			return v[0], nil
		}
		return "", fmt.Errorf("DIGEST-MD5 challenge: %s more than once", k)
	}
	nonce, err := one("nonce")
	if err != nil || nonce == "" {
		return nil, errors.New("DIGEST-MD5 challenge without a nonce")
	}
	if alg, _ := one("algorithm"); alg != "md5-sess" {
		return nil, fmt.Errorf("DIGEST-MD5 challenge: algorithm %q, want md5-sess", alg)
	}
	if qop, _ := one("qop"); qop != "" && !slices.Contains(strings.Split(qop, ","), "auth") {
		return nil, fmt.Errorf("DIGEST-MD5 challenge: the server offers qop %q, not auth", qop)
	}
	charset, err := one("charset")
	if err != nil {
		return nil, err
	}
	utf8Set := strings.EqualFold(charset, "utf-8")
	var realm string
	if r := kv["realm"]; len(r) > 0 {
		realm = r[0] // the server's first realm, as the JDK's client takes it
	}
	user, err := digestText(m.user, utf8Set)
	if err != nil {
		return nil, fmt.Errorf("user name: %w", err)
	}
	realmText, err := digestText(realm, utf8Set)
	if err != nil {
		return nil, fmt.Errorf("realm: %w", err)
	}
	password, err := digestText(m.password, utf8Set)
	if err != nil {
		return nil, fmt.Errorf("password: %w", err)
	}
	if m.cnonce == "" {
		b := make([]byte, 16)
		rand.Read(b)
		m.cnonce = base64.RawStdEncoding.EncodeToString(b)
	}
	const nc, qop = "00000001", "auth"
	secret := md5.Sum([]byte(user + ":" + realmText + ":" + password))
	ha1 := hexMD5(string(secret[:]) + ":" + nonce + ":" + m.cnonce)
	kd := func(a2 string) string {
		return hexMD5(ha1 + ":" + nonce + ":" + nc + ":" + m.cnonce + ":" + qop + ":" + hexMD5(a2))
	}
	m.rspauth = kd(":" + m.uri)
	var b strings.Builder
	if utf8Set {
		b.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&b, "username=%s,", quoteDigest(m.user))
	if r := kv["realm"]; len(r) > 0 {
		fmt.Fprintf(&b, "realm=%s,", quoteDigest(realm))
	}
	fmt.Fprintf(&b, "nonce=%s,nc=%s,cnonce=%s,digest-uri=%s,maxbuf=65536,response=%s,qop=%s",
		quoteDigest(nonce), nc, quoteDigest(m.cnonce), quoteDigest(m.uri), kd("AUTHENTICATE:"+m.uri), qop)
	return []byte(b.String()), nil
}

func hexMD5(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// digestText gives the bytes a user name, realm or password is hashed
// as: ISO 8859-1 when every character fits it, UTF-8 otherwise, which
// only a server that offered charset=utf-8 accepts (RFC 2831 2.1.2.1).
func digestText(s string, utf8Set bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", errors.New("not valid UTF-8")
	}
	latin := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			if !utf8Set {
				return "", errors.New("characters beyond ISO 8859-1, and the server did not offer charset=utf-8")
			}
			return s, nil
		}
		latin = append(latin, byte(r))
	}
	return string(latin), nil
}

// quoteDigest makes a quoted-string, escaping '"' and '\'.
func quoteDigest(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// parseDigest reads the comma-separated key=value pairs of a challenge
// or of the server's final token; values are tokens or quoted-strings. A
// key may come more than once (realm).
func parseDigest(s string) (map[string][]string, error) {
	kv := map[string][]string{}
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ',' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			break
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 {
			return nil, fmt.Errorf("DIGEST-MD5: malformed token %q", s)
		}
		key := strings.ToLower(strings.TrimSpace(s[i : i+eq]))
		i += eq + 1
		var val strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\\' && i < len(s) {
					val.WriteByte(s[i])
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("DIGEST-MD5: unterminated quoted value in %q", s)
			}
		} else {
			end := strings.IndexByte(s[i:], ',')
			if end < 0 {
				end = len(s) - i
			}
			val.WriteString(strings.TrimSpace(s[i : i+end]))
			i += end
		}
		kv[key] = append(kv[key], val.String())
	}
	return kv, nil
}
