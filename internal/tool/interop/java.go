package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// JavaDir is where Debian installs Java libraries.
var JavaDir = "/usr/share/java"

// curatorJars are the jars a Curator peer needs; zookeeper.jar's manifest
// brings the rest of ZooKeeper's dependencies.
var curatorJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar", "slf4j-nop.jar",
}

// Classpath returns the classpath for Curator peers.
func Classpath() string {
	parts := make([]string, len(curatorJars))
	for i, j := range curatorJars {
		parts[i] = filepath.Join(JavaDir, j)
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

// Program is a compiled Java peer.
type Program struct {
	dir   string
	class string
	jars  []string // extra jars in JavaDir, beyond Curator's
}

var (
	compileMu sync.Mutex
	compiled  = map[string]*Program{}
)

// CompileJava compiles a single-file Java program (its public class named
// after the file) once per test binary and content. The program may use
// the shared Peer class (connection and line protocol). jars names further
// jars in JavaDir that the program needs beyond Curator's.
func CompileJava(t testing.TB, src string, jars ...string) *Program {
	t.Helper()
	requireTools(t, "javac", "java")
	for _, j := range append(append([]string(nil), curatorJars...), jars...) {
		if _, err := os.Stat(filepath.Join(JavaDir, j)); err != nil {
			missing(t, "Java jar "+j+" (Debian packages libcurator-recipes-java, libcurator-discovery-java: make deps)")
		}
	}
	body, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	h := sha256.New()
	h.Write(body)
	h.Write([]byte(strings.Join(jars, ",")))
	key := hex.EncodeToString(h.Sum(nil)[:8])
	compileMu.Lock()
	defer compileMu.Unlock()
	if p, ok := compiled[key]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "zkcoord-java-")
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	class := strings.TrimSuffix(filepath.Base(src), ".java")
	if err := os.WriteFile(filepath.Join(dir, class+".java"), body, 0o644); err != nil {
		t.Fatalf("interop: %v", err)
	}
	p := &Program{dir: dir, class: class, jars: jars}
	shared, err := peerDir()
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	// The shared Peer class is compiled along if the program uses it.
	cmd := exec.Command("javac", "-nowarn", "-cp", p.classpath(), "-sourcepath", shared, "-d", dir, filepath.Join(dir, class+".java"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("interop: javac %s: %v\n%s", src, err, out)
	}
	compiled[key] = p
	return p
}

// classpath is Curator's classpath and the program's extra jars.
func (p *Program) classpath() string {
	cp := Classpath()
	for _, j := range p.jars {
		cp += string(os.PathListSeparator) + filepath.Join(JavaDir, j)
	}
	return cp
}

// Start runs the program with args. The process is killed when the test
// ends.
func (p *Program) Start(t testing.TB, args ...string) *Proc {
	t.Helper()
	cp := p.dir + string(os.PathListSeparator) + p.classpath()
	jargs := append([]string{"-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, p.class}, args...)
	return start(t, fmt.Sprintf("java %s", p.class), nil, "java", jargs...)
}
