package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command's own files build for Windows: none that Windows compiles
// imports golang.org/x/sys/unix or names a syscall identifier Windows'
// syscall package lacks. (A full GOOS=windows build needs a Windows C
// compiler for the tree-sitter parser; this checks what is ours.)
func TestPortableToWindows(t *testing.T) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "windows", "amd64", true
	unixOnly := map[string]bool{"SIGUSR1": true, "SIGUSR2": true, "SIGCHLD": true, "SIGWINCH": true, "SIGSTOP": true,
		"SIGTSTP": true, "SIGCONT": true, "Credential": true, "Setpgid": true, "Kill": true, "Getpgid": true, "SIGTTIN": true, "SIGTTOU": true}
	files, _ := filepath.Glob("*.go")
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := ctx.MatchFile(".", name); err != nil || !ok {
			continue
		}
		checked++
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == "golang.org/x/sys/unix" {
				t.Errorf("%s imports golang.org/x/sys/unix without a unix build constraint", name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "syscall" && unixOnly[sel.Sel.Name] {
					t.Errorf("%s uses syscall.%s, which Windows lacks", name, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Errorf("only %d files checked", checked)
	}
}
