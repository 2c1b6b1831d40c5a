package templates

import _ "embed"

// TraceTracer is the Python tracer of `capguard trace` (trace/capguard_tracer.py):
// it hooks the graph APIs once torch is imported and writes the capture map
// named by CAPGUARD_TRACE_OUT.
//
//go:embed trace/capguard_tracer.py
var TraceTracer []byte

// TraceSiteCustomize is the sitecustomize.py written beside TraceTracer in
// the folder `capguard trace` puts first on PYTHONPATH: it installs the
// tracer and then runs the next sitecustomize on sys.path, if any.
//
//go:embed trace/sitecustomize.py
var TraceSiteCustomize []byte

// TraceTracerName and TraceSiteCustomizeName are the file names they must
// have in that folder.
const (
	TraceTracerName        = "capguard_tracer.py"
	TraceSiteCustomizeName = "sitecustomize.py"
)
