package zkcoord_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADME builds and vets every Go block of README.md against the library
// in this tree, so that what a reader copies compiles, and checks that each
// block is gofmt'ed and drops no error. Each block is a whole file, starting with its package
// clause (a comment may come first), so it can be copied as is; a block
// without one fails the test. Each is built as a package of its own.
func TestREADME(t *testing.T) {
	blocks := readmeGoBlocks(t, "README.md")
	if len(blocks) == 0 {
		t.Fatal("README.md has no go blocks")
	}
	dir := readmeModule(t)
	for _, b := range blocks {
		if _, err := parser.ParseFile(token.NewFileSet(), "", b.text, parser.PackageClauseOnly); err != nil {
			t.Errorf("README.md:%d: a go block must be a whole file, starting with its package clause: %v", b.line, err)
			continue
		}
		if formatted, err := format.Source([]byte(b.text)); err == nil && string(formatted) != b.text {
			t.Errorf("README.md:%d: the go block is not gofmt'ed", b.line)
		}
		pkg := filepath.Join(dir, fmt.Sprintf("line%d", b.line))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(b.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if t.Failed() {
		return
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		if out, err := readmeGo(dir, args...); err != nil {
			t.Fatalf("go %s of README.md's go blocks: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, msg := range readmeDroppedErrors(t, dir) {
		t.Error(msg)
	}
}

// readmeBlock is a fenced go block: its text and the README line of its
// first line of code.
type readmeBlock struct {
	line int
	text string
}

func readmeGoBlocks(t *testing.T, name string) []readmeBlock {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []readmeBlock
		cur    *readmeBlock
		fence  string
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = "```"
			if strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "go" {
				cur = &readmeBlock{line: n + 1}
			}
		case fence != "" && trimmed == fence:
			if cur != nil {
				blocks = append(blocks, *cur)
			}
			cur, fence = nil, ""
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if fence != "" {
		t.Fatalf("%s: a code block is not closed", name)
	}
	return blocks
}

// readmeModule makes a module in a temporary directory that uses this
// tree's library through a replace directive, with this module's
// requirements and sums, so that building in it needs nothing new.
func readmeModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	modLine := regexp.MustCompile(`(?m)^module .*$`)
	if !modLine.Match(mod) {
		t.Fatal("go.mod has no module line")
	}
	mod = modLine.ReplaceAll(mod, []byte("module example.com/readme"))
	mod = append(mod, fmt.Sprintf("\nrequire github.com/zkcoord/zkcoord v0.0.0\n\nreplace github.com/zkcoord/zkcoord => %s\n", strconv.Quote(root))...)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readmeGo runs the go command in dir, offline, and returns its output with
// the generated files' positions turned into README.md's lines.
func readmeGo(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return readmePositions(string(out)), err
}

var readmePosition = regexp.MustCompile(`(?:\./)?line(\d+)/main\.go:(\d+)`)

// readmePositions rewrites lineN/main.go:L (the block starting at README
// line N, line L of it) as README.md:N+L-1.
func readmePositions(s string) string {
	return readmePosition.ReplaceAllStringFunc(s, func(m string) string {
		sub := readmePosition.FindStringSubmatch(m)
		start, _ := strconv.Atoi(sub[1])
		l, _ := strconv.Atoi(sub[2])
		return fmt.Sprintf("README.md:%d", start+l-1)
	})
}

// readmeDroppedErrors type-checks the blocks built in dir and reports every
// error value they drop: a call whose error result is not used (also in a
// defer or go statement) and an error assigned to the blank identifier.
func readmeDroppedErrors(t *testing.T, dir string) []string {
	t.Helper()
	out, err := readmeGo(dir, "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./...")
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	errType := types.Universe.Lookup("error").Type()
	isErr := func(tv types.Type) bool { return tv != nil && types.Identical(tv, errType) }
	var msgs []string
	pkgs, err := filepath.Glob(filepath.Join(dir, "line*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range pkgs {
		name := filepath.Join(pkg, "main.go")
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(filepath.Base(pkg), fset, []*ast.File{file}, info); err != nil {
			t.Fatalf("type-checking %s: %v", readmePositions(name), err)
		}
		report := func(n ast.Node, what string) {
			p := fset.Position(n.Pos())
			msgs = append(msgs, readmePositions(fmt.Sprintf("%s/main.go:%d: %s", filepath.Base(pkg), p.Line, what)))
		}
		// dropsError reports whether the results of call include an error.
		dropsError := func(call *ast.CallExpr) bool {
			switch tv := info.Types[call].Type.(type) {
			case *types.Tuple:
				for i := range tv.Len() {
					if isErr(tv.At(i).Type()) {
						return true
					}
				}
				return false
			default:
				return isErr(tv)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ExprStmt:
				if call, ok := n.X.(*ast.CallExpr); ok && dropsError(call) {
					report(n, "the error of this call is dropped")
				}
			case *ast.DeferStmt:
				if dropsError(n.Call) {
					report(n, "the error of this deferred call is dropped")
				}
			case *ast.GoStmt:
				if dropsError(n.Call) {
					report(n, "the error of this go statement's call is dropped")
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); !ok || id.Name != "_" {
						continue
					}
					var typ types.Type
					if len(n.Rhs) == len(n.Lhs) {
						typ = info.Types[n.Rhs[i]].Type
					} else if tuple, ok := info.Types[n.Rhs[0]].Type.(*types.Tuple); ok {
						typ = tuple.At(i).Type()
					}
					if isErr(typ) {
						report(n, "an error is assigned to _")
					}
				}
			}
			return true
		})
	}
	if len(pkgs) == 0 {
		t.Fatal("no README blocks were built")
	}
	return msgs
}
