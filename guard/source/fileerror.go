package source

// FileError is a per-file problem: unreadable, not UTF-8, a syntax error.
// The rest of the run goes on.
type FileError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	// Syntax: the file has a syntax error and the rest of it was analysed
	// (every other error means the file was not checked).
	Syntax bool `json:"-"`
	// Decode: the file could not be decoded as Python source (bytes not
	// valid in its PEP 263 encoding, NUL bytes); it was not checked. Like a
	// syntax error this is a finding about the file (exit 1), not a failure
	// of the run.
	Decode bool `json:"-"`
}

func (e FileError) Error() string { return e.Path + ": " + e.Message }
