package zktest

import (
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

// KDC is a throwaway MIT Kerberos realm on a loopback port; see
// zkserver.KDC.
type KDC = zkserver.KDC

const (
	// KDCRealm is the realm of every KDC StartKDC starts.
	KDCRealm = zkserver.KDCRealm
	// KerberosServerPrincipal is the principal of servers started
	// WithKerberos.
	KerberosServerPrincipal = zkserver.KerberosServerPrincipal
)

// ErrNoKDC is wrapped by LaunchKDC when the KDC programs are missing;
// StartKDC then skips the test, or fails it under CI.
var ErrNoKDC = zkserver.ErrNoKDC

// WithSASLDigest makes the servers authenticate clients with SASL
// DIGEST-MD5 against users (name to password); see
// zkserver.WithSASLDigest.
func WithSASLDigest(users map[string]string) Option { return zkserver.WithSASLDigest(users) }

// WithKerberos makes the servers authenticate clients with Kerberos in
// kdc's realm, as KerberosServerPrincipal; see zkserver.WithKerberos.
func WithKerberos(kdc *KDC) Option { return zkserver.WithKerberos(kdc) }

// LaunchKDC starts a KDC as zkserver.LaunchKDC does, for programs.
func LaunchKDC() (*KDC, error) { return zkserver.LaunchKDC() }

// StartKDC starts a KDC for the test tb and registers a cleanup that
// closes it. When the KDC programs (Debian packages krb5-kdc and
// krb5-admin-server) are missing it skips the test, or fails it when CI
// is "true"; any other failure fails the test.
func StartKDC(tb testing.TB) *KDC {
	tb.Helper()
	k, err := zkserver.LaunchKDC()
	if err != nil {
		if errors.Is(err, ErrNoKDC) && !ciStrict() {
			tb.Skipf("zktest: skipping: %v", err)
		}
		tb.Fatalf("zktest: %v", err)
	}
	tb.Cleanup(k.Close)
	return k
}
