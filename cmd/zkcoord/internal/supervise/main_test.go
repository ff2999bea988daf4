//go:build unix

package supervise

import (
	"fmt"
	"os"
	"testing"

	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/zktest"
)

// parentRole is the role of a test binary re-executed to start a child and
// be killed under it (parentMain).
const parentRole = "parent"

var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	// The children the tests start run through the test binary, re-executed
	// as their shim.
	RunShimIfAsked()
	if launch.Role() == parentRole {
		os.Exit(parentMain(launch.Args()))
	}
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
}

// parentMain starts the shell script args[0] as a child, prints its pid,
// and waits for it.
func parentMain(args []string) int {
	c, err := Start(Spec{Name: "script", Argv: []string{"sh", "-c", args[0]}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("started", c.Pid())
	return c.Status()
}
