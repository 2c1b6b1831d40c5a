// Package rules holds capguard's rules, the layer above the rule framework
// (guard/analysis), the value model (guard/tensors) and the fix model
// (guard/fixmodel), and below the pipeline (package guard). Each rule lives
// in its own file named after it (cg101_host_sync_in_capture.go), with its
// documentation; helpers.go holds what several rules share, all.go the
// explicit list of every rule. A rule file never uses a name another rule
// file defines (TestNoRuleToRuleReference): what two rules share moves to
// helpers.go or to a layer below. docs/adding-a-rule.md says how to add one.
package rules
