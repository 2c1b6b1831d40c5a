// The names of the layers below as this package's code knew them before the
// split (guard/doc.go): aliases and variables, no copy.

package source

import (
	"github.com/cudagraph-capguard/capguard/guard/config"
)

type (
	Config = config.Config
)
