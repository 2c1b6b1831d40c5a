package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "not built yet",
		Action: func(c *cli.Context) error {
			return exitCode(2, errors.New("check: not built yet"))
		},
	}
}
