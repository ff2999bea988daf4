package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/zkcoord/zkcoord"
)

// --zk takes a connect string as zkCli, Curator and Kazoo do, chroot
// suffix included; a chroot given twice must agree.
func TestConnectStringChroot(t *testing.T) {
	base := ConnOptions{SessionTimeout: time.Second, ConnectTimeout: time.Second}
	o := base
	o.Servers = "zk1:2181,zk2/app"
	cfg, err := o.Config()
	if err != nil || !slices.Equal(cfg.Servers, []string{"zk1:2181", "zk2:2181"}) || cfg.Chroot != "/app" {
		t.Fatalf("Config = %+v, %v", cfg, err)
	}
	o = base
	o.Servers, o.Chroot = "zk1:2181/app", "/other"
	if _, err := o.Config(); err == nil {
		t.Fatal("two different chroots were accepted")
	}
	o = base
	o.Servers = " , "
	if _, err := o.Config(); err == nil {
		t.Fatal("no servers were accepted")
	}
}

// The SASL flags make one mechanism, or a usage error that says what is
// missing or given twice; a password file's line ending is not part of
// the password.
func TestSASLOptions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte("s3cret\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	krb5 := filepath.Join(t.TempDir(), "krb5.conf")
	if err := os.WriteFile(krb5, []byte("[libdefaults]\n\tdefault_realm = EXAMPLE.COM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := ConnOptions{Servers: "zk1:2181", SessionTimeout: time.Second, ConnectTimeout: time.Second}
	o := base
	o.SASLUser, o.SASLPasswordFile = "bob", file
	cfg, err := o.Config()
	if err != nil || cfg.SASL != (zkcoord.DigestMD5{User: "bob", Password: "s3cret"}) {
		t.Fatalf("Config = %+v, %v; want DIGEST-MD5 bob with the file's password", cfg.SASL, err)
	}
	for _, c := range []struct {
		name string
		set  func(*ConnOptions)
		want string
	}{
		{"two mechanisms", func(o *ConnOptions) { o.SASLUser, o.KerberosPrincipal = "bob", "app" }, "one SASL mechanism"},
		{"two passwords", func(o *ConnOptions) { o.SASLUser, o.SASLPassword, o.SASLPasswordFile = "bob", "pw", file }, "once"},
		{"password alone", func(o *ConnOptions) { o.SASLPassword = "pw" }, "needs --sasl-user"},
		{"missing file", func(o *ConnOptions) { o.SASLUser, o.SASLPasswordFile = "bob", file+".none" }, "--sasl-password-file"},
		{"principal alone", func(o *ConnOptions) { o.KerberosPrincipal = "app" }, "go together"},
		{"missing keytab", func(o *ConnOptions) {
			o.KerberosPrincipal, o.KerberosKeytab, o.KerberosConfig = "app", file+".none", krb5
		}, "keytab"},
	} {
		o := base
		c.set(&o)
		if _, err := o.Config(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Config error %v; want one saying %q", c.name, err, c.want)
		}
	}
}

// A password from the environment is used but not shown as a flag's
// default in the help.
func TestSecretsFromEnvironmentNotShown(t *testing.T) {
	t.Setenv(envSASLPassword, "from-env")
	t.Setenv(envAuth, "u:from-env")
	var o ConnOptions
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	o.Register(fs)
	if o.SASLPassword != "from-env" || o.Auth != "u:from-env" {
		t.Fatalf("password %q, auth %q: the environment's values were not taken", o.SASLPassword, o.Auth)
	}
	for _, name := range []string{"sasl-password", "auth"} {
		if d := fs.Lookup(name).DefValue; d != "" {
			t.Errorf("--%s shows the default %q", name, d)
		}
	}
}

// --pin-servers, or ZKCOORD_PIN_SERVERS, pins the Session's servers, and
// PassOn gives it to another zkcoord process.
func TestPinServers(t *testing.T) {
	parse := func(args ...string) (*ConnOptions, error) {
		var o ConnOptions
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		o.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := o.Config()
		return &o, err
	}
	for _, c := range []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"", []string{"--pin-servers"}, true},
		{"true", nil, true},
		{"true", []string{"--pin-servers=false"}, false},
	} {
		t.Setenv(envPinServers, c.env)
		o, err := parse(c.args...)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := o.Config()
		if cfg.PinServers != c.want {
			t.Errorf("%s=%q %v: PinServers %v, want %v", envPinServers, c.env, c.args, cfg.PinServers, c.want)
		}
		t.Setenv(envPinServers, "")
		passed, err := parse(o.PassOn()...)
		if err != nil || passed.PinServers != c.want {
			t.Errorf("%s=%q %v: passed on as %v (%v), want %v", envPinServers, c.env, c.args, passed.PinServers, err, c.want)
		}
	}
	t.Setenv(envPinServers, "sometimes")
	if _, err := parse(); err == nil || !strings.Contains(err.Error(), envPinServers) {
		t.Errorf("%s=sometimes: error %v; want one naming the variable", envPinServers, err)
	}
}
