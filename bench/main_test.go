//go:build bench

package bench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

var (
	flagQuick   = flag.Bool("bench.quick", false, "few iterations and small sizes, to try the suite out")
	flagOnly    = flag.String("bench.only", "", "run only the suites whose id matches this regular expression")
	flagOut     = flag.String("bench.out", "../docs", "directory that receives benchmarks.md and bench/")
	flagNoDelay = flag.Bool("bench.nodelay", false, "measure on loopback only, without the deployed-like settings")
	flagMerge   = flag.Bool("bench.merge", false, "merge this run's metrics into the results already in -bench.out, keeping the others")
	flagRender  = flag.Bool("bench.render", false, "measure nothing: render benchmarks.md and the charts again from bench/results.json")
)

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(memProbeEnv) != "" || os.Getenv(goPeerEnv) != "" || *flagRender {
		// A re-executed test binary measuring memory or running as a
		// peer, or a rendering of earlier results: no server.
		os.Exit(m.Run())
	}
	if os.Getenv(zktest.EnvJava) == "" {
		// The server runs with the full JIT (see testdata/server-java).
		if wrapper, err := filepath.Abs(filepath.Join("testdata", "server-java")); err == nil {
			os.Setenv(zktest.EnvJava, wrapper)
		}
	}
	c, err := zktest.Launch()
	if err != nil {
		// A benchmark run without a server is a failure, not a skip.
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	activate(&setting{cluster: c})
	code := m.Run()
	c.Close()
	os.Exit(code)
}
