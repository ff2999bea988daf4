package zkcoord_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/zkcoord/zkcoord"
)

func TestParseConnectString(t *testing.T) {
	for _, c := range []struct {
		in      string
		servers []string
		chroot  string
	}{
		{"zk1:2181", []string{"zk1:2181"}, ""},
		{"zk1:2181,zk2:2182/app", []string{"zk1:2181", "zk2:2182"}, "/app"},
		{" zk1 , zk2:2/app/x/", []string{"zk1:2181", "zk2:2"}, "/app/x"},
		{"[::1]:2181,[::1]/", []string{"[::1]:2181", "[::1]:2181"}, ""},
	} {
		servers, chroot, err := zkcoord.ParseConnectString(c.in)
		if err != nil || !slices.Equal(servers, c.servers) || chroot != c.chroot {
			t.Errorf("ParseConnectString(%q) = %q, %q, %v; want %q, %q", c.in, servers, chroot, err, c.servers, c.chroot)
		}
	}
	for _, bad := range []string{"", "/app", "zk1:2181/a//b", "::1:2181"} {
		if _, _, err := zkcoord.ParseConnectString(bad); !errors.Is(err, zkcoord.ErrInvalidConfig) {
			t.Errorf("ParseConnectString(%q) = %v, want ErrInvalidConfig", bad, err)
		}
	}
}
