// Package patcher applies capguard's suggested fixes to Python source.
//
// A rule in package guard reports a diagnostic; a fixable one carries a
// guard.Fix: byte-range edits of the original file, an applicability (safe,
// unsafe, display-only) and whether the edits call the persistent-buffer
// helper. The patcher:
//
//   - applies the edits of every chosen fix of a file in one pass, in order,
//     and skips a fix whose edits overlap one already taken (it is reported,
//     and usually applied in the next round);
//   - inserts the persistent-buffer helper (templates.PersistentBuffer) once
//     per file after the module docstring, the `from __future__` imports and
//     the import block, or imports it from a configured module; a file that
//     already defines or imports persistent_buffer gets nothing;
//   - keeps the file's line endings (LF or CRLF), indentation (spaces or
//     tabs) and byte order mark, and every byte outside the edits;
//   - refuses a file that is not valid UTF-8 or that has a syntax error, and
//     a fix whose result would not parse;
//   - repeats analyse-and-fix rounds until no fix is left (at most
//     MaxRounds), as ruff does, so fixing fixed code changes nothing;
//   - renders a unified diff that `patch -p1` and `git apply` accept, and
//     writes files atomically (temporary file in the same folder, fsync,
//     rename, mode kept).
//
// The entry point is Fix: it works in memory and returns, per file, the
// original bytes, the fixed bytes, the diff and the fixes applied and
// skipped; Result.Write writes them. Apply, EnsureHelper, UnifiedDiff and
// WriteFile are the building blocks, usable on their own.
package patcher
