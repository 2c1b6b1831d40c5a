package source

func LineStartOf(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

// LineEndOf is the offset just past the newline ending the line holding off.
func LineEndOf(src []byte, off int) int {
	for off < len(src) && src[off] != '\n' {
		off++
	}
	if off < len(src) {
		off++
	}
	return off
}

// LineIndent is the leading whitespace of the line holding offset off.
func LineIndent(src []byte, off int) string {
	start := LineStartOf(src, off)
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}
