// The names of the layers below as this package's code knew them before the
// split (guard/doc.go): aliases and variables, no copy.

package tensors

import (
	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

type (
	File     = analysis.File
	Function = analysis.Function
	Node     = analysis.Node
	Pass     = analysis.Pass
)

var (
	allocators         = torchapi.Allocators
	bodyStmts          = analysis.BodyStmts
	dtypeMethods       = torchapi.DtypeMethods
	hostBuilders       = torchapi.HostBuilders
	hostReads          = torchapi.HostReads
	legacyConstructors = torchapi.LegacyConstructors
	isName             = analysis.IsName
	likeFactories      = torchapi.LikeFactories
	metaAttrs          = torchapi.MetaAttrs
	metaMethods        = torchapi.MetaMethods
	Parse              = analysis.Parse
	randomFactories    = torchapi.RandomFactories
	tensorDraws        = torchapi.TensorDraws
	short              = analysis.Short
	splitMethods       = torchapi.SplitMethods
	strMethods         = torchapi.StrMethods
	tensorAttrs        = torchapi.TensorAttrs
	tensorOnlyMethods  = torchapi.TensorOnlyMethods
	torchFactories     = torchapi.TorchFactories
	cpuStateGetters    = torchapi.CPUStateGetters
	torchClass         = torchapi.TorchClass
	torchMeta          = torchapi.TorchMeta
	Unparen            = analysis.Unparen
	Walk               = analysis.Walk
	walkCode           = analysis.WalkCode
)
