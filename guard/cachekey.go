package guard

// CaptureMapFile is the capture map a run with opts merges ("" for none):
// a result cache keys results by its contents too.
func CaptureMapFile(opts Options) string { return captureMapFile(opts, opts.Config) }
