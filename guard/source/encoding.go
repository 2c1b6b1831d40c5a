package source

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// PEP 263 source encodings.
//
// Python reads a source file as UTF-8 unless a comment on its first or
// second line (the second only when the first is a comment too) declares
// another encoding: `# -*- coding: latin-1 -*-`, `# vim: set fileencoding=cp1252 :`.
// capguard decodes such a file to UTF-8 before parsing, so every position it
// reports (lines, byte columns, fix offsets) is in the decoded text; the
// patcher encodes the fixed text back (EncodeSource) before writing it.

// codingRE is PEP 263's regular expression.
var codingRE = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// DecodeError says why a file cannot be decoded; Line and Column (1-based,
// columns in bytes of the file as read) point at the first bad byte, or are
// 0 when the problem is the declaration itself.
type DecodeError struct {
	Encoding     string
	Line, Column int
	Msg          string
	Hint         string // what to do, or ""
}

func (e *DecodeError) Error() string {
	s := e.Msg
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d, column %d)", e.Line, e.Column)
	}
	s += "; skipped"
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// DeclaredEncoding returns the PEP 263 encoding declared in src's first two
// lines as written ("latin-1"), or "" when there is none.
func DeclaredEncoding(src []byte) string {
	src = bytes.TrimPrefix(src, utf8BOM)
	for i := 0; i < 2 && len(src) > 0; i++ {
		line := src
		if j := bytes.IndexByte(src, '\n'); j >= 0 {
			line, src = src[:j], src[j+1:]
		} else {
			src = nil
		}
		if m := codingRE.FindSubmatch(line); m != nil {
			return string(m[1])
		}
		// The second line counts only after a comment-only (or blank) first line.
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			break
		}
	}
	return ""
}

// IsUTF8 reports whether an encoding name (as DeclaredEncoding returns it)
// is UTF-8 under another spelling, or empty (Python's default).
func IsUTF8(name string) bool {
	switch n := normalEncoding(name); {
	case n == "", n == "utf-8", n == "utf8", n == "u8", n == "utf", n == "cp65001":
		return true
	case strings.HasPrefix(n, "utf-8-"): // utf-8-sig, and "utf-8-*" as Python's tokenizer takes it
		return true
	}
	return false
}

// normalEncoding lowercases a codec name and spells its separators "-", as
// Python's codec lookup treats "Latin_1", "latin-1" and "LATIN 1" alike.
func normalEncoding(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	return strings.NewReplacer("_", "-", " ", "-").Replace(n)
}

// pythonCodecs maps Python's codec names and aliases (normalized) to
// golang.org/x/text encodings where the IANA index does not know the
// Python spelling (or knows it as another encoding).
var pythonCodecs = map[string]encoding.Encoding{
	"latin-1": charmap.ISO8859_1, "latin1": charmap.ISO8859_1, "iso-latin-1": charmap.ISO8859_1,
	"iso-8859-1": charmap.ISO8859_1, "iso8859-1": charmap.ISO8859_1, "8859": charmap.ISO8859_1,
	"cp819": charmap.ISO8859_1, "l1": charmap.ISO8859_1, "latin": charmap.ISO8859_1,
	"latin-2": charmap.ISO8859_2, "latin2": charmap.ISO8859_2, "l2": charmap.ISO8859_2,
	"latin-3": charmap.ISO8859_3, "latin3": charmap.ISO8859_3,
	"latin-4": charmap.ISO8859_4, "latin4": charmap.ISO8859_4,
	"cyrillic": charmap.ISO8859_5, "arabic": charmap.ISO8859_6, "greek": charmap.ISO8859_7, "hebrew": charmap.ISO8859_8,
	"latin-5": charmap.ISO8859_9, "latin5": charmap.ISO8859_9, "l5": charmap.ISO8859_9,
	"latin-6": charmap.ISO8859_10, "latin6": charmap.ISO8859_10,
	"latin-7": charmap.ISO8859_13, "latin7": charmap.ISO8859_13,
	"latin-8": charmap.ISO8859_14, "latin8": charmap.ISO8859_14,
	"latin-9": charmap.ISO8859_15, "latin9": charmap.ISO8859_15, "l9": charmap.ISO8859_15,
	"latin-10": charmap.ISO8859_16, "latin10": charmap.ISO8859_16,
	"cp1250": charmap.Windows1250, "cp1251": charmap.Windows1251, "cp1252": charmap.Windows1252,
	"cp1253": charmap.Windows1253, "cp1254": charmap.Windows1254, "cp1255": charmap.Windows1255,
	"cp1256": charmap.Windows1256, "cp1257": charmap.Windows1257, "cp1258": charmap.Windows1258,
	"cp874": charmap.Windows874, "cp437": charmap.CodePage437, "cp850": charmap.CodePage850,
	"cp852": charmap.CodePage852, "cp855": charmap.CodePage855, "cp858": charmap.CodePage858,
	"cp860": charmap.CodePage860, "cp862": charmap.CodePage862, "cp863": charmap.CodePage863,
	"cp865": charmap.CodePage865, "cp866": charmap.CodePage866,
	"koi8-r": charmap.KOI8R, "koi8-u": charmap.KOI8U,
	"mac-roman": charmap.Macintosh, "macroman": charmap.Macintosh, "macintosh": charmap.Macintosh,
	"mac-cyrillic": charmap.MacintoshCyrillic, "maccyrillic": charmap.MacintoshCyrillic,
	"euc-jp": japanese.EUCJP, "eucjp": japanese.EUCJP, "ujis": japanese.EUCJP, "u-jis": japanese.EUCJP,
	"shift-jis": japanese.ShiftJIS, "shiftjis": japanese.ShiftJIS, "sjis": japanese.ShiftJIS, "s-jis": japanese.ShiftJIS,
	"cp932": japanese.ShiftJIS, "ms932": japanese.ShiftJIS, "mskanji": japanese.ShiftJIS, "ms-kanji": japanese.ShiftJIS,
	"iso-2022-jp": japanese.ISO2022JP, "iso2022-jp": japanese.ISO2022JP, "csiso2022jp": japanese.ISO2022JP,
	"euc-kr": korean.EUCKR, "euckr": korean.EUCKR, "cp949": korean.EUCKR, "uhc": korean.EUCKR,
	"gbk": simplifiedchinese.GBK, "cp936": simplifiedchinese.GBK, "ms936": simplifiedchinese.GBK,
	"gb2312": simplifiedchinese.GBK, "euc-cn": simplifiedchinese.GBK, "euccn": simplifiedchinese.GBK,
	"gb18030": simplifiedchinese.GB18030, "gb18030-2000": simplifiedchinese.GB18030,
	"hz": simplifiedchinese.HZGB2312, "hz-gb": simplifiedchinese.HZGB2312, "hz-gb-2312": simplifiedchinese.HZGB2312,
	"big5": traditionalchinese.Big5, "big5-tw": traditionalchinese.Big5, "csbig5": traditionalchinese.Big5, "cp950": traditionalchinese.Big5,
}

// lookupEncoding finds a non-UTF-8 codec by its Python name; ascii reports
// the ASCII codec (checked by hand: x/text has no encoder that refuses
// bytes over 0x7F).
func lookupEncoding(name string) (enc encoding.Encoding, ascii bool, ok bool) {
	n := normalEncoding(name)
	switch n {
	case "ascii", "us-ascii", "646", "us", "ansi-x3.4-1968", "iso646-us", "cp367":
		return nil, true, true
	}
	if e, found := pythonCodecs[n]; found {
		return e, false, true
	}
	if e, err := ianaindex.IANA.Encoding(n); err == nil && e != nil {
		return e, false, true
	}
	return nil, false, false
}

// DecodeSource turns a Python source file's bytes into UTF-8 as Python's
// tokenizer reads them (PEP 263): UTF-8 unless the first two lines declare
// another encoding. It returns the UTF-8 source (src itself, unchanged, for
// a UTF-8 file: a byte order mark is kept), the encoding name as declared
// ("" for none) and a *DecodeError for bytes that are not valid in that
// encoding, an unknown encoding, or a BOM with a declaration of another
// encoding.
func DecodeSource(src []byte) ([]byte, string, error) {
	declared := DeclaredEncoding(src)
	if bytes.HasPrefix(src, utf8BOM) && declared != "" && !bomUTF8(declared) {
		return nil, declared, &DecodeError{Encoding: declared,
			Msg: fmt.Sprintf("a UTF-8 byte order mark and a coding declaration of %s (Python: encoding problem)", declared)}
	}
	if IsUTF8(declared) {
		if !utf8.Valid(src) {
			line, col := lineCol(src, invalidUTF8At(src))
			what := "not valid UTF-8"
			if declared != "" {
				what = fmt.Sprintf("not valid %s, as its coding declaration says", declared)
			}
			return nil, declared, &DecodeError{Encoding: "utf-8", Line: line, Column: col, Msg: what,
				Hint: "Python refuses it too; a file in another encoding declares it with a PEP 263 `# coding:` comment"}
		}
		return src, declared, nil
	}
	enc, ascii, ok := lookupEncoding(declared)
	if !ok {
		return nil, declared, &DecodeError{Encoding: declared, Msg: fmt.Sprintf("declares an unknown encoding %q (PEP 263)", declared)}
	}
	if ascii || isASCII(src) {
		for i, b := range src {
			if b >= 0x80 {
				line, col := lineCol(src, i)
				return nil, declared, &DecodeError{Encoding: declared, Line: line, Column: col,
					Msg: fmt.Sprintf("byte 0x%02x is not valid %s", b, declared)}
			}
		}
		if enc == nil || !stateful(enc) {
			return src, declared, nil // ASCII reads the same in every ASCII-compatible codec
		}
	}
	if cm, ok := enc.(*charmap.Charmap); ok {
		return decodeCharmap(src, cm, declared)
	}
	out, err := enc.NewDecoder().Bytes(src)
	// x/text decoders turn bytes a codec does not define into U+FFFD (only
	// GB18030 can spell U+FFFD itself).
	if err != nil || enc != simplifiedchinese.GB18030 && bytes.ContainsRune(out, utf8.RuneError) {
		// Find the first line that does so, as Python would stop there.
		line := 1
		for start := 0; start < len(src); line++ {
			end := bytes.IndexByte(src[start:], '\n')
			if end < 0 {
				end = len(src)
			} else {
				end += start + 1
			}
			dec, lerr := enc.NewDecoder().Bytes(src[start:end])
			if lerr != nil || enc != simplifiedchinese.GB18030 && bytes.ContainsRune(dec, utf8.RuneError) {
				return nil, declared, &DecodeError{Encoding: declared, Line: line, Column: 1,
					Msg: fmt.Sprintf("not valid %s, as its coding declaration says", declared)}
			}
			start = end
		}
		return nil, declared, &DecodeError{Encoding: declared, Msg: fmt.Sprintf("not valid %s, as its coding declaration says", declared)}
	}
	return out, declared, nil
}

// stateful reports encodings whose ASCII bytes do not mean ASCII (escape
// sequences switch the character set).
func stateful(e encoding.Encoding) bool {
	return e == japanese.ISO2022JP || e == simplifiedchinese.HZGB2312
}

// EncodeSource turns UTF-8 source back into the encoding DecodeSource
// returned for it: the bytes a fixed file is written with. UTF-8 (and "")
// returns src itself.
func EncodeSource(src []byte, name string) ([]byte, error) {
	if IsUTF8(name) {
		if !utf8.Valid(src) {
			return nil, fmt.Errorf("not valid UTF-8")
		}
		return src, nil
	}
	enc, ascii, ok := lookupEncoding(name)
	if !ok {
		return nil, fmt.Errorf("unknown encoding %q", name)
	}
	if ascii || isASCII(src) && (enc == nil || !stateful(enc)) {
		for i, b := range src {
			if b >= 0x80 {
				line, col := lineCol(src, i)
				return nil, fmt.Errorf("line %d, column %d: a character %s cannot encode", line, col, name)
			}
		}
		return src, nil
	}
	if cm, ok := enc.(*charmap.Charmap); ok {
		return encodeCharmap(src, cm, name)
	}
	out, err := enc.NewEncoder().Bytes(src)
	if err != nil {
		return nil, fmt.Errorf("holds a character %s cannot encode: %v", name, err)
	}
	return out, nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// lineCol is the 1-based line and byte column of offset off.
func lineCol(b []byte, off int) (int, int) {
	off = min(off, len(b))
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	return line, off - start + 1
}

// bomUTF8 reports whether a declaration may follow a UTF-8 byte order mark:
// Python's tokenizer takes only "utf-8" and "utf-8-*" there (not "utf8").
func bomUTF8(declared string) bool {
	n := strings.ReplaceAll(strings.ToLower(declared), "_", "-")
	if len(n) > 12 {
		n = n[:12]
	}
	return n == "utf-8" || strings.HasPrefix(n, "utf-8-")
}

// isoC1 lists the ISO 8859 code pages, where Python's codecs read the bytes
// 0x80-0x9F as the C1 control characters U+0080-U+009F and x/text leaves
// them undefined.
var isoC1 = map[*charmap.Charmap]bool{
	charmap.ISO8859_2: true, charmap.ISO8859_3: true, charmap.ISO8859_4: true, charmap.ISO8859_5: true,
	charmap.ISO8859_6: true, charmap.ISO8859_7: true, charmap.ISO8859_8: true, charmap.ISO8859_9: true,
	charmap.ISO8859_10: true, charmap.ISO8859_13: true, charmap.ISO8859_14: true, charmap.ISO8859_15: true,
	charmap.ISO8859_16: true,
}

// decodeCharmap decodes a single-byte code page byte by byte, naming the
// first byte the code page leaves undefined (as Python's charmap codecs do).
func decodeCharmap(src []byte, cm *charmap.Charmap, name string) ([]byte, string, error) {
	out := make([]byte, 0, len(src)+len(src)/8)
	for i, b := range src {
		var r rune
		switch {
		case b < 0x80:
			r = rune(b)
		case b < 0xA0 && isoC1[cm]:
			r = rune(b)
		default:
			r = cm.DecodeByte(b)
		}
		if r == utf8.RuneError {
			line, col := lineCol(src, i)
			return nil, name, &DecodeError{Encoding: name, Line: line, Column: col,
				Msg: fmt.Sprintf("not valid %s, as its coding declaration says: byte 0x%02x is undefined there", name, b)}
		}
		out = utf8.AppendRune(out, r)
	}
	return out, name, nil
}

func encodeCharmap(src []byte, cm *charmap.Charmap, name string) ([]byte, error) {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		switch b, ok := cm.EncodeRune(r); {
		case r < 0x80 && n == 1:
			out = append(out, byte(r))
		case r >= 0x80 && r < 0xA0 && isoC1[cm]:
			out = append(out, byte(r))
		case ok && r != utf8.RuneError:
			out = append(out, b)
		default:
			line, col := lineCol(src, i)
			return nil, fmt.Errorf("line %d, column %d: %q cannot be written in %s", line, col, r, name)
		}
		i += n
	}
	return out, nil
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}
