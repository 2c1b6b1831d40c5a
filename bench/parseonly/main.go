// Command parseonly is the baseline of bench/run.sh: it reads every *.py
// file under the given paths and parses it with tree-sitter, in parallel with
// one parser per goroutine, closing each tree, and does nothing else. It is
// what "a bare tree-sitter parse of the same files" means in the README.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/python"
)

func main() {
	exclude := flag.String("exclude", "", "a folder name to skip (site-packages)")
	flag.Parse()
	var files []string
	for _, root := range flag.Args() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__" || d.Name() == *exclude) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, ".py") {
				files = append(files, p)
			}
			return nil
		})
	}
	var wg sync.WaitGroup
	ch := make(chan string)
	var mu sync.Mutex
	lines := 0
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := sitter.NewParser()
			p.SetLanguage(python.GetLanguage())
			n := 0
			for f := range ch {
				src, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				t, err := p.ParseCtx(context.Background(), nil, src)
				if err == nil && t != nil {
					t.Close()
				}
				n += bytes.Count(src, []byte("\n"))
			}
			mu.Lock()
			lines += n
			mu.Unlock()
		}()
	}
	for _, f := range files {
		ch <- f
	}
	close(ch)
	wg.Wait()
	fmt.Printf("parsed %d files, %d lines\n", len(files), lines)
}
