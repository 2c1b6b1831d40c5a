package guard

import (
	"path/filepath"
)

// CaptureMapFile is the capture map a run with opts merges ("" for none):
// a result cache keys results by its contents too.
func CaptureMapFile(opts Options) string { return captureMapFile(opts, opts.Config) }

// captureMapFile is the map a run merges: Options.CaptureMap, else the
// config's capture-map (relative to the config's folder).
func captureMapFile(opts Options, cfg *Config) string {
	if opts.CaptureMap != "" {
		return opts.CaptureMap
	}
	if cfg != nil && cfg.CaptureMap != "" {
		if !filepath.IsAbs(cfg.CaptureMap) && cfg.Path != "" {
			return filepath.Join(filepath.Dir(cfg.Path), cfg.CaptureMap)
		}
		return cfg.CaptureMap
	}
	return ""
}
