package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func fixCommand() *cli.Command {
	return &cli.Command{
		Name:  "fix",
		Usage: "not built yet",
		Action: func(c *cli.Context) error {
			return exitCode(2, errors.New("fix: not built yet"))
		},
	}
}
