// Package suppress is capguard's one suppression filter, above the rule
// framework and below the pipeline: every finding (a rule's, a capture
// map's, a project-wide pass's) goes through Finish, which applies
// per-file-ignores, `# capguard: ignore[...]` and `# noqa` comments and the
// rule selection, and reports invalid and unused suppressions (CG900,
// CG901).
package suppress
