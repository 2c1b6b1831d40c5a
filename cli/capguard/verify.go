package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "not built yet",
		Action: func(c *cli.Context) error {
			return exitCode(2, errors.New("verify: not built yet"))
		},
	}
}
