package events

import "github.com/perch-tui/perch/jsonx"

// unquote reads raw as exactly one JSON string (JSON white space around it
// allowed) in a single pass, with encoding/json's results: invalid UTF-8 and
// unpaired surrogates become U+FFFD. ok is false for anything else (another
// type, null, bad escapes, control characters, trailing data), in which case
// s is "". It replaces json.Unmarshal(raw, &s), which validates the bytes in
// a first pass and unquotes them in a second.
func unquote(raw []byte) (s string, ok bool) { return jsonx.Unquote(raw) }
