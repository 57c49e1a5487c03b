package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoToolNamesElsewhere: tool names live here. A string literal in the
// non-test code of another package that is a known tool name fails, with
// two honest limits:
//   - a name that is one lower-case word ("command", "search", "todo") is
//     also an ordinary word, a key or a label, so it is only caught where
//     it is compared with a name (case clauses and == / != with an
//     operand whose text says "name");
//   - fakedaemon and internal/gentranscript (the fakes and the benchmark
//     inputs' writer are oracles that import nothing of perch) and
//     testdata are not read.
func TestNoToolNamesElsewhere(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "fakedaemon", "gentranscript", "vendor", "node_modules":
				return filepath.SkipDir
			}
			if rel == "tools" || rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, f := range toolNameLiterals(t, path) {
			t.Errorf("%s%s: tool name %s outside tools", rel, f.pos, f.lit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type found struct{ pos, lit string }

// toolNameLiterals lists the tool-name literals of one Go file.
func toolNameLiterals(t *testing.T, path string) []found {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []found
	check := func(lit *ast.BasicLit, compared bool) {
		if lit == nil || lit.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || !isToolName(s) || (isWord(s) && !compared) {
			return
		}
		p := fset.Position(lit.Pos())
		out = append(out, found{":" + strconv.Itoa(p.Line), lit.Value})
	}
	// Literals compared with a name, found first so each is reported once.
	compared := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SwitchStmt:
			if n.Tag == nil || !saysName(n.Tag) {
				return true
			}
			for _, s := range n.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok {
						compared[lit] = true
					}
				}
			}
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			if lit, ok := n.Y.(*ast.BasicLit); ok && saysName(n.X) {
				compared[lit] = true
			}
			if lit, ok := n.X.(*ast.BasicLit); ok && saysName(n.Y) {
				compared[lit] = true
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.Field:
			// A struct tag names a wire field, not a tool.
			ast.Inspect(n.Type, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok {
					check(lit, compared[lit])
				}
				return true
			})
			return false
		case *ast.BasicLit:
			check(n, compared[n])
		}
		return true
	})
	return out
}

// isToolName: s is a name of the table, in any case.
func isToolName(s string) bool {
	_, ok := names[strings.ToLower(s)]
	return ok
}

// isWord: s is one lower-case word, which prose and keys use too.
func isWord(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// saysName: the expression's text mentions a name ("name", "Name",
// "t.Tool.Name", "toolName(t)").
func saysName(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && strings.Contains(strings.ToLower(id.Name), "name") {
			found = true
		}
		return !found
	})
	return found
}

// TestToolNameLiteralsFinds: the check finds a tool name used as one and
// leaves the same word in other uses alone.
func TestToolNameLiteralsFinds(t *testing.T) {
	src := `package p

type w struct {
	Search bool ` + "`json:\"web_search\"`" + `
}

func f(name, sender string) {
	_ = "read_file"          // 8: found
	switch name {
	case "todo", "mystery":  // 10: found
	}
	if sender == "command" { // a sender, not a name
	}
	_ = name == "shell"      // 14: found
	_ = "search"             // a label
	_ = "TodoWrite"          // 16: found
}
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range toolNameLiterals(t, path) {
		got = append(got, f.pos+" "+f.lit)
	}
	want := []string{`:8 "read_file"`, `:10 "todo"`, `:14 "shell"`, `:16 "TodoWrite"`}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("found %v, want %v", got, want)
	}
}
