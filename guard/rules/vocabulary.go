// The vocabulary of the rules: the names of the layers below (the rule
// framework, the value model, the fix model, source text, torch tables)
// under the names rule code uses, so that a rule reads as analysis code
// and not as a list of package paths.

package rules

import (
	"github.com/cudagraph-capguard/capguard/guard/analysis"
	"github.com/cudagraph-capguard/capguard/guard/fixmodel"
	"github.com/cudagraph-capguard/capguard/guard/index"
	"github.com/cudagraph-capguard/capguard/guard/source"
	"github.com/cudagraph-capguard/capguard/guard/syntax"
	"github.com/cudagraph-capguard/capguard/guard/tensors"
	"github.com/cudagraph-capguard/capguard/guard/torchapi"
)

type (
	assignment   = tensors.Assignment
	Class        = analysis.Class
	Context      = analysis.Context
	Diagnostic   = analysis.Diagnostic
	File         = analysis.File
	Fix          = analysis.Fix
	Function     = analysis.Function
	hostBindings = tensors.HostBindings
	kernelUse    = fixmodel.KernelUse
	model        = tensors.Model
	Node         = analysis.Node
	Pass         = analysis.Pass
	prepWrite    = analysis.PrepWrite
	Project      = analysis.Project
	Region       = analysis.Region
	Rule         = analysis.Rule
	Temp         = tensors.Temp
	TextEdit     = analysis.TextEdit
)

const (
	Captured        = analysis.Captured
	Claimed         = analysis.Claimed
	DevCPU          = tensors.DevCPU
	DevPinned       = tensors.DevPinned
	KHostData       = tensors.KHostData
	KHostRead       = tensors.KHostRead
	KMeta           = tensors.KMeta
	KTensor         = tensors.KTensor
	KUnknown        = tensors.KUnknown
	Launcher        = analysis.Launcher
	PostCapture     = analysis.PostCapture
	ReplayPrep      = analysis.ReplayPrep
	Resolved        = analysis.Resolved
	Safe            = analysis.Safe
	SeverityError   = analysis.SeverityError
	SeverityWarning = analysis.SeverityWarning
	Unsafe          = analysis.Unsafe
)

var (
	holdsContainer    = fixmodel.HoldsContainer
	stmtOf            = fixmodel.StmtOf
	moduleOwnTensors  = torchapi.ModuleOwnTensors
	allocators        = torchapi.Allocators
	aliasMethods      = torchapi.AliasMethods
	objectBuilder     = torchapi.ObjectBuilder
	assignmentsIn     = tensors.AssignmentsIn
	attrHeldElsewhere = fixmodel.AttrHeldElsewhere
	bodyStmts         = analysis.BodyStmts
	boundToNone       = fixmodel.BoundToNone
	checkedTempFix    = fixmodel.CheckedTempFix
	constructorWhy    = fixmodel.ConstructorWhy
	ContainerStores   = torchapi.ContainerStores
	cpuMirror         = tensors.CpuMirror
	dataDependentOps  = torchapi.DataDependentOps
	derivingMethods   = torchapi.DerivingMethods
	freshAllocation   = fixmodel.FreshAllocation
	writtenIn         = fixmodel.WrittenIn
	seesNoWrite       = fixmodel.SeesNoWrite
	writtenFrom       = fixmodel.WrittenFrom
	harmlessUses      = torchapi.HarmlessUses
	hostBuilders      = torchapi.HostBuilders
	legacyCtors       = torchapi.LegacyConstructors
	hostReads         = torchapi.HostReads
	hostValue         = tensors.HostValue
	inAny             = analysis.InAny
	inLoop            = analysis.InLoop
	enclosingLoop     = analysis.EnclosingLoop
	instanceKey       = fixmodel.InstanceKey
	isDtype           = tensors.IsDtype
	isName            = analysis.IsName
	isTensorFactory   = tensors.IsTensorFactory
	blankless         = syntax.Blankless
	torchOpFresh      = tensors.TorchOpFresh
	freshMethods      = torchapi.FreshOps
	join              = index.Join
	keptHow           = fixmodel.KeptHow
	keptObject        = fixmodel.KeptObject
	kernelUsesOf      = fixmodel.KernelUsesOf
	keyword           = tensors.Keyword
	lastName          = analysis.LastName
	layoutViews       = torchapi.LayoutViews
	metaAttrs         = torchapi.MetaAttrs
	metaMethods       = torchapi.MetaMethods
	lazyAllocation    = fixmodel.LazyAllocation
	likeFactories     = torchapi.LikeFactories
	innermostAt       = analysis.InnermostAt
	lineEndOf         = source.LineEndOf
	lineIndent        = source.LineIndent
	lineStartOf       = source.LineStartOf
	markTargets       = analysis.MarkTargets
	mentions          = analysis.Mentions
	methodCall        = tensors.MethodCall
	newModel          = tensors.NewModel
	noFix             = fixmodel.NoFix
	positional        = tensors.Positional
	posOf             = analysis.PosOf
	precedingStmts    = analysis.PrecedingStmts
	randomFactories   = torchapi.RandomFactories
	rawAllocators     = torchapi.RawAllocators
	rebinds           = fixmodel.Rebinds
	sameTensorMeta    = fixmodel.SameTensorMeta
	short             = analysis.Short
	tempNoFix         = fixmodel.TempNoFix
	tempOf            = tensors.TempOf
	TensorHomonyms    = torchapi.TensorHomonyms
	tensorMethods     = torchapi.TensorMethods
	tensorOnlyMethods = torchapi.TensorOnlyMethods
	Unparen           = analysis.Unparen
	attrRoot          = analysis.AttrRoot
	viewMethods       = torchapi.ViewMethods
	Walk              = analysis.Walk
	walkCode          = analysis.WalkCode
	writtenAfter      = fixmodel.WrittenAfter
)
