package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cudagraph-capguard/capguard/patcher"
	"github.com/cudagraph-capguard/capguard/templates"
)

func helperCommand() *cli.Command {
	return &cli.Command{
		Name:      "helper",
		Usage:     "print (or --write) the persistent-buffer module that helper-module points at",
		ArgsUsage: " ",
		Description: `capguard fix writes the persistent_buffer helper once per top-level package, as
<package>/_capguard_buffers.py, and fixed files of the package import it (a script outside any
package gets the helper's source inserted). A project that keeps it in a module of its own choosing
writes that module once with

    capguard helper --write pkg/buffers.py

and set helper-module = "pkg.buffers" under [tool.capguard] (or pass --helper-module
pkg.buffers to capguard fix): fixed files then import it. An existing file is left alone
unless it already holds this module (then nothing changes) or --force is given.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "write", Aliases: []string{"w"}, Usage: "write the module to this .py file instead of printing it"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing file that holds something else"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("capguard helper takes no argument (did you mean capguard helper --write %s?)", c.Args().First())
			}
			body := []byte(templates.PersistentBuffer)
			path := c.String("write")
			if path == "" {
				_, err := c.App.Writer.Write(body)
				return err
			}
			if !strings.HasSuffix(path, ".py") {
				return usageError("--write %s: give a .py file (the module helper-module names)", path)
			}
			module := moduleName(path)
			hint := fmt.Sprintf("set helper-module = %q under [tool.capguard] (or pass --helper-module %s to capguard fix)", module, module)
			old, err := os.ReadFile(path)
			switch {
			case err == nil && bytes.Equal(old, body):
				fmt.Fprintf(c.App.ErrWriter, "%s already holds the persistent-buffer module; %s\n", path, hint)
				return nil
			case err == nil && !c.Bool("force"):
				return exitCode(2, fmt.Errorf("%s exists and holds something else; not written (--force replaces it)", path))
			case err == nil:
				if err := patcher.WriteFile(path, body); err != nil {
					return exitCode(2, err)
				}
			case errors.Is(err, fs.ErrNotExist):
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return exitCode(2, err)
				}
				if err := os.WriteFile(path, body, 0o644); err != nil {
					return exitCode(2, err)
				}
			default:
				return exitCode(2, err)
			}
			fmt.Fprintf(c.App.ErrWriter, "wrote %s; %s\n", path, hint)
			return nil
		},
	}
}

// moduleName is the dotted module a .py file is imported as: from the
// working directory when the file is under it, else from the topmost
// folder of its __init__.py chain.
func moduleName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	noExt := strings.TrimSuffix(abs, ".py")
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, noExt); err == nil && !strings.HasPrefix(rel, "..") {
			return strings.ReplaceAll(filepath.ToSlash(rel), "/", ".")
		}
	}
	parts := []string{filepath.Base(noExt)}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "__init__.py")); err != nil || dir == filepath.Dir(dir) {
			break
		}
		parts = append([]string{filepath.Base(dir)}, parts...)
	}
	return strings.Join(parts, ".")
}
