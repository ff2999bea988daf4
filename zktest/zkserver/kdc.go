package zkserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// KDCRealm is the realm of every KDC LaunchKDC starts.
const KDCRealm = "ZKTEST.LOCAL"

// ErrNoKDC is wrapped by LaunchKDC when MIT Kerberos' KDC programs
// (Debian packages krb5-kdc and krb5-admin-server) are missing.
var ErrNoKDC = errors.New("zkserver: the MIT Kerberos KDC is not usable on this machine")

// kdcEnctypes are the encryption types of the realm: AES, which the JDK
// and Go's Kerberos libraries share.
const kdcEnctypes = "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96"

// KDC is a throwaway MIT Kerberos realm, KDCRealm, served by krb5kdc on a
// free loopback port, with its database, configuration files and keytabs
// in a temporary directory. Clients find it through the krb5.conf at
// ConfigPath; AddPrincipal makes principals and their keytabs. Close
// stops it and removes the directory. Its methods are safe for concurrent
// use.
type KDC struct {
	dir      string
	port     int
	env      []string
	kadmin   string // kadmin.local
	launcher *launcher
	cmd      *exec.Cmd
	done     chan struct{}

	mu      sync.Mutex // serializes kadmin.local
	keytabs map[string]string
	closed  bool
}

// LaunchKDC creates the realm and starts its KDC, waiting until it takes
// connections. When krb5kdc, kdb5_util or kadmin.local is missing the
// error wraps ErrNoKDC. Nothing is left behind when it fails.
func LaunchKDC() (*KDC, error) {
	bins := map[string]string{}
	for _, b := range []string{"krb5kdc", "kdb5_util", "kadmin.local"} {
		p, err := exec.LookPath(b)
		if err != nil {
			for _, dir := range []string{"/usr/sbin", "/sbin"} {
				if q := filepath.Join(dir, b); isExecutable(q) {
					p, err = q, nil
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s not found (install Debian packages krb5-kdc and krb5-admin-server)", ErrNoKDC, b)
		}
		bins[b] = p
	}
	dir, err := os.MkdirTemp("", "zkkdc-")
	if err != nil {
		return nil, fmt.Errorf("zkserver: %w", err)
	}
	k := &KDC{dir: dir, launcher: newLauncher(), keytabs: map[string]string{}}
	if err := k.start(bins); err != nil {
		log, _ := tailFile(k.logPath(), startLogLines)
		k.Close()
		return nil, fmt.Errorf("zkserver: starting a KDC: %w\nlast lines of its log:\n%s", err, log)
	}
	return k, nil
}

func (k *KDC) start(bins map[string]string) error {
	ports, err := allocPorts(1)
	if err != nil {
		return err
	}
	k.port = ports[0]
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.ConfigPath(), "KRB5_KDC_PROFILE="+filepath.Join(k.dir, "kdc.conf"))
	if err := k.writeConfig(); err != nil {
		return err
	}
	master := make([]byte, 16)
	rand.Read(master)
	if err := k.run(bins["kdb5_util"], "create", "-s", "-r", KDCRealm, "-P", hex.EncodeToString(master)); err != nil {
		return err
	}
	k.kadmin = bins["kadmin.local"]
	cmd := exec.Command(bins["krb5kdc"], "-n", "-r", KDCRealm)
	cmd.Env = k.env
	cmd.Dir = k.dir
	out, err := os.OpenFile(k.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := k.launcher.start(cmd); err != nil {
		return err
	}
	k.cmd, k.done = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		close(k.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", hostPort(k.port), probeTimeout)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-k.done:
			return fmt.Errorf("krb5kdc exited: %v", cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("krb5kdc does not take connections on %s: %w", hostPort(k.port), err)
		case <-time.After(pollInterval):
		}
	}
}

func (k *KDC) writeConfig() error {
	krb5 := fmt.Sprintf(`[libdefaults]
	default_realm = %[1]s
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	dns_canonicalize_hostname = false
	udp_preference_limit = 1
	ticket_lifetime = 1h
	forwardable = false
	default_tkt_enctypes = %[3]s
	default_tgs_enctypes = %[3]s
	permitted_enctypes = %[3]s

[realms]
	%[1]s = {
		kdc = 127.0.0.1:%[2]d
	}

[domain_realm]
	localhost = %[1]s
	.localhost = %[1]s
`, KDCRealm, k.port, kdcEnctypes)
	var supported []string
	for _, e := range strings.Fields(kdcEnctypes) {
		supported = append(supported, e+":normal")
	}
	kdc := fmt.Sprintf(`[kdcdefaults]
	kdc_ports = %[2]d
	kdc_tcp_ports = %[2]d

[realms]
	%[1]s = {
		database_name = %[3]s
		key_stash_file = %[4]s
		acl_file = %[5]s
		max_life = 1h
		master_key_type = aes256-cts-hmac-sha1-96
		supported_enctypes = %[6]s
		kdc_ports = %[2]d
		kdc_tcp_ports = %[2]d
	}

[logging]
	kdc = FILE:%[7]s
`, KDCRealm, k.port, filepath.Join(k.dir, "principal"), filepath.Join(k.dir, "stash"),
		filepath.Join(k.dir, "kadm5.acl"), strings.Join(supported, " "), k.logPath())
	for name, text := range map[string]string{"krb5.conf": krb5, "kdc.conf": kdc, "kadm5.acl": ""} {
		if err := os.WriteFile(filepath.Join(k.dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// run runs one of the realm's administration programs to its end.
func (k *KDC) run(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Env = k.env
	cmd.Dir = k.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), args[0], err, out)
	}
	return nil
}

func (k *KDC) logPath() string { return filepath.Join(k.dir, "kdc.log") }

// Realm returns the realm's name, KDCRealm.
func (k *KDC) Realm() string { return KDCRealm }

// Addr returns the KDC's address, "127.0.0.1:port" (TCP).
func (k *KDC) Addr() string { return hostPort(k.port) }

// ConfigPath returns the path of the realm's krb5.conf, for clients
// (KRB5_CONFIG, or java.security.krb5.conf): the default realm is
// KDCRealm, its KDC this one over TCP, and localhost belongs to it.
func (k *KDC) ConfigPath() string { return filepath.Join(k.dir, "krb5.conf") }

// AddPrincipal creates principal name (with or without "@" and the
// realm) with a random key, and writes its keys to a new keytab whose
// path it returns; for a principal it made before, it returns that
// keytab again.
func (k *KDC) AddPrincipal(name string) (keytab string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return "", errors.New("zkserver: the KDC is closed")
	}
	if !strings.Contains(name, "@") {
		name += "@" + KDCRealm
	}
	if kt, ok := k.keytabs[name]; ok {
		return kt, nil
	}
	keytab = filepath.Join(k.dir, strings.NewReplacer("/", "_", "@", "_").Replace(name)+".keytab")
	if err := k.run(k.kadmin, "-r", KDCRealm, "-q", "addprinc -randkey "+name); err != nil {
		return "", err
	}
	if err := k.run(k.kadmin, "-r", KDCRealm, "-q", "ktadd -k "+keytab+" "+name); err != nil {
		return "", err
	}
	// kadmin.local reports a failed query in its output only.
	if _, err := os.Stat(keytab); err != nil {
		return "", fmt.Errorf("zkserver: no keytab for %s: %w", name, err)
	}
	k.keytabs[name] = keytab
	return keytab, nil
}

// Close stops the KDC and removes its directory. It is idempotent.
func (k *KDC) Close() {
	k.mu.Lock()
	closed := k.closed
	k.closed = true
	k.mu.Unlock()
	if closed {
		return
	}
	k.launcher.close()
	if k.cmd != nil {
		k.cmd.Process.Kill()
		<-k.done
	}
	os.RemoveAll(k.dir)
}
