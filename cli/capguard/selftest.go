package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func selftestCommand() *cli.Command {
	return &cli.Command{
		Name:  "selftest",
		Usage: "not built yet",
		Action: func(c *cli.Context) error {
			return exitCode(2, errors.New("selftest: not built yet"))
		},
	}
}
