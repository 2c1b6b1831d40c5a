package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func ruleCommand() *cli.Command {
	return &cli.Command{
		Name:  "rule",
		Usage: "not built yet",
		Action: func(c *cli.Context) error {
			return exitCode(2, errors.New("rule: not built yet"))
		},
	}
}
