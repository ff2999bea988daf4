//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

// The SASL flags and their environment variables authenticate the
// command: DIGEST-MD5 with a password given or read from a file,
// Kerberos with a principal and its keytab. A node created with --acl
// creator is then the SASL user's alone, and credentials the server
// refuses end the command with status 1, naming the flag.
func TestSASLFlags(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSASLDigest(map[string]string{"bob": "pw"}))
	env := testEnv(c.ConnectString())
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := zkcEnv(t, env, "whoami", "--sasl-user", "bob", "--sasl-password-file", file)
	if r.code != 0 || !strings.Contains(r.stdout, "sasl") || !strings.Contains(r.stdout, "bob") {
		t.Fatalf("whoami with --sasl-user and --sasl-password-file: %s", r)
	}
	withEnv := append(env[:len(env):len(env)], "ZKCOORD_SASL_USER=bob", "ZKCOORD_SASL_PASSWORD=pw")
	if r := zkcEnv(t, withEnv, "create", "/bobs", "mine", "--acl", "creator"); r.code != 0 {
		t.Fatalf("create with ZKCOORD_SASL_USER and ZKCOORD_SASL_PASSWORD: %s", r)
	}
	if r := zkcEnv(t, withEnv, "get", "/bobs"); r.code != 0 || !strings.Contains(r.stdout, "mine") {
		t.Fatalf("get as bob: %s", r)
	}
	if r := zkcEnv(t, env, "get", "/bobs"); r.code == 0 {
		t.Fatalf("get without SASL read bob's node: %s", r)
	}
	r = zkcEnv(t, env, "whoami", "--sasl-user", "bob", "--sasl-password", "wrong")
	if r.code != exitFailure || !strings.Contains(r.stderr, "rejected the credentials of --sasl-user") {
		t.Fatalf("a wrong password: want exit 1 naming --sasl-user, got %s", r)
	}

	kdc := zktest.StartKDC(t)
	k := zktest.Start(t, zktest.WithKerberos(kdc))
	keytab, err := kdc.AddPrincipal("cli")
	if err != nil {
		t.Fatal(err)
	}
	r = zkcEnv(t, testEnv(k.ConnectString()), "whoami", "--kerberos-principal", "cli", "--kerberos-keytab", keytab,
		"--kerberos-config", kdc.ConfigPath())
	if r.code != 0 || !strings.Contains(r.stdout, "cli@"+kdc.Realm()) {
		t.Fatalf("whoami with --kerberos-principal: %s", r)
	}
}
