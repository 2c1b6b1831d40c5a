// The names of the layers below as this package's code knew them before the
// split (guard/doc.go): aliases and variables, no copy.

package fixmodel

import (
	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/source"
	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

type (
	Applicability = analysis.Applicability
	assignment    = tensors.Assignment
	File          = analysis.File
	Fix           = analysis.Fix
	Function      = analysis.Function
	Node          = analysis.Node
	Pass          = analysis.Pass
	Project       = analysis.Project
	Region        = analysis.Region
	Temp          = tensors.Temp
	TextEdit      = analysis.TextEdit
)

const (
	HelperName  = analysis.HelperName
	PostCapture = analysis.PostCapture
	ReplayPrep  = analysis.ReplayPrep
	Safe        = analysis.Safe
	Unsafe      = analysis.Unsafe
)

var (
	aliasMethods    = torchapi.AliasMethods
	allocators      = torchapi.Allocators
	bodyStmts       = analysis.BodyStmts
	ContainerStores = torchapi.ContainerStores
	inAny           = analysis.InAny
	inLoop          = analysis.InLoop
	isName          = analysis.IsName
	keyword         = tensors.Keyword
	lastName        = analysis.LastName
	likeFactories   = torchapi.LikeFactories
	lineEndOf       = source.LineEndOf
	lineStartOf     = source.LineStartOf
	markTargets     = analysis.MarkTargets
	mentions        = analysis.Mentions
	methodCall      = tensors.MethodCall
	newModel        = tensors.NewModel
	Parse           = analysis.Parse
	positional      = tensors.Positional
	posOf           = analysis.PosOf
	short           = analysis.Short
	Unparen         = analysis.Unparen
	attrRoot        = analysis.AttrRoot
	Walk            = analysis.Walk
	walkCode        = analysis.WalkCode
)
