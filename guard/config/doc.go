// Package config is capguard's configuration layer, above the contexts
// layer (whose Config it fills) and below file discovery (guard/source)
// and the rule framework: capguard.toml and [tool.capguard], their
// validation, the framework presets (data: presets.go), and the project and
// module roots a run's paths are relative to.
package config
