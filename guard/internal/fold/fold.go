// Package fold finds ASCII words in text whatever their letters' case,
// without a lower-cased copy of the text: the cheap test that lets a
// regexp run only on the few comments and docstrings that can match it.
package fold

// Contains reports whether s contains needle (lower-case ASCII letters)
// with ASCII letters matched in either case.
func Contains(s, needle string) bool {
	first := needle[0]
	for i := 0; i+len(needle) <= len(s); i++ {
		if s[i]|0x20 != first {
			continue
		}
		j := 1
		for j < len(needle) && s[i+j]|0x20 == needle[j] {
			j++
		}
		if j == len(needle) {
			return true
		}
	}
	return false
}
