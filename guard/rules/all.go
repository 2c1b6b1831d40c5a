package rules

// All is every rule of this package, in ID order: the one list the
// pipeline registers, `capguard rule` prints and the registry test checks
// (fixtures, a doc page and a README row for each). A new rule is added
// here and nowhere else (docs/adding-a-rule.md).
var All = []*Rule{
	ruleHostSync,              // CG101
	ruleHostValueBaked,        // CG102
	ruleH2DFromHost,           // CG103
	ruleDataDependentShape,    // CG104
	ruleRebindInsteadOfCopy,   // CG201
	ruleDerivedOutsideCapture, // CG202
	ruleStalePadding,          // CG203
	ruleOutputBeforeReplay,    // CG204
	ruleOutputKept,            // CG205
	ruleTemporaryIntoKernel,   // CG301
	ruleUnverifiedClaim,       // CG302
}
