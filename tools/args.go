package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// defaultKeys are the arguments a tool's header shows when its own are not
// known, the first one set wins.
var defaultKeys = []string{"path", "command", "query", "file", "url", "pattern", "action", "regex", "name"}

// KeyArg is the argument a person wants to see first in a call's header:
// the command, the path, the search pattern. args is the call's arguments
// as JSON (nil when they did not parse), raw their text as received. ""
// when there is none.
func KeyArg(name string, args json.RawMessage, raw string) string {
	if len(args) == 0 {
		return raw
	}
	var a map[string]json.RawMessage
	if args[0] != '{' || json.Unmarshal(args, &a) != nil {
		return firstLine(raw, 200)
	}
	t := Lookup(name)
	keys := t.keys
	if keys == nil {
		keys = defaultKeys
	}
	for _, k := range keys {
		if s := str(a[k]); s != "" {
			return s
		}
	}
	if t.Format == FormatPatch || t.edit != editNone {
		files := PatchFiles(str(a["patch"]))
		if len(files) == 0 {
			files = EditFiles(name, args)
		}
		switch len(files) {
		case 0:
			return ""
		case 1:
			return files[0]
		}
		return fmt.Sprintf("%s +%d more", files[0], len(files)-1)
	}
	return ""
}

// Arg reads one string argument of a call's JSON arguments ("" when absent
// or not a string).
func Arg(args json.RawMessage, key string) string {
	if len(args) == 0 || args[0] != '{' {
		return ""
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	return str(a[key])
}

// PatchText is the patch an apply_patch call sends.
func PatchText(args json.RawMessage) string { return Arg(args, "patch") }

// WriteContent is the content a write_to_file call writes.
func WriteContent(args json.RawMessage) string { return Arg(args, "content") }

// str is a JSON string's value; "" for anything else.
func str(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// firstLine is s's first line (marked " …" when more follow), at most n
// bytes of it.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return cut(s, n)
}

// cut is at most n bytes of s, cut at a rune's start.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// PatchFiles lists the files a V4A patch touches.
func PatchFiles(patch string) []string {
	var files []string
	for _, l := range strings.Split(cut(patch, 1<<20), "\n") {
		for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
			if f, ok := strings.CutPrefix(l, p); ok {
				files = append(files, strings.TrimSpace(f))
			}
		}
	}
	return files
}
