// Package fixmodel is capguard's fix model, above the value model
// (guard/tensors) and below the rules: the facts a fix needs before
// capguard offers it (which object owns a persistent buffer, whether a
// value is rebound, read or kept after the site) and the persistent-buffer
// fix itself (fixes.go).
package fixmodel
