package discovery

import (
	"strconv"
	"testing"

	"github.com/zkcoord/zkcoord"
)

func newDiscovery(t *testing.T, sess *zkcoord.Session, base string, opts ...Option) *Discovery {
	t.Helper()
	d, err := New(sess, base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// served returns the instances p hands out; it fails the test if p has
// stopped.
func served(t *testing.T, p *Provider) []Instance {
	t.Helper()
	in, err := p.Instances()
	if err != nil {
		t.Fatalf("provider instances: %v", err)
	}
	return in
}
