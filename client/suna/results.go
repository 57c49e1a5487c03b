package suna

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// toolResult reads a tool row: the output sent to the model (the row's
// content), or, where the history left content out, metadata.result, or a
// legacy row's metadata.frontend_content.tool_execution.result.
func toolResult(c content, meta normalize.Object) (callID, name string, res *events.ToolResult) {
	exec := normalize.AsObjectShared(normalize.AsObjectShared(meta["frontend_content"])["tool_execution"])
	if exec == nil {
		exec = object(normalize.AsObjectShared(meta["frontend_content"])["tool_execution"])
	}
	callID = normalize.FirstStr(c.obj, "tool_call_id")
	if callID == "" {
		callID = normalize.FirstStr(meta, "tool_call_id")
	}
	if callID == "" {
		callID = normalize.FirstStr(exec, "tool_call_id")
	}
	name = normalize.FirstStr(c.obj, "name")
	if name == "" {
		name = normalize.FirstStr(meta, "function_name")
	}
	if name == "" {
		name = normalize.FirstStr(exec, "function_name", "xml_tag_name")
	}

	result := object(meta["result"])
	if result == nil {
		result = object(exec["result"])
	}
	res = &events.ToolResult{}
	var out json.RawMessage // the output as JSON, for the exit code
	fromContent := true
	switch {
	case c.obj != nil && notNull(c.obj, "content"):
		res.Text = text(c.obj["content"])
		out = c.obj["content"]
	case c.hasPlain:
		res.Text = c.plain
	case c.list != nil:
		res.Text = text(c.list)
	case result != nil:
		res.Text = text(result["output"])
		out = result["output"]
		fromContent = false
	default:
		fromContent = false
	}
	if fromContent {
		if output, ok, legacy := legacyResult(res.Text); legacy {
			// The printed ToolResult the older pipeline sent the model:
			// its output is the result, its success flag the status.
			res.Text = output
			out, _ = json.Marshal(output)
			if !ok {
				res.IsError = true
			}
		}
	}
	if result != nil {
		if ok, known := normalize.Bool(result["success"]); known && !ok {
			res.IsError = true
		}
		if e := text(result["error"]); e != "" {
			res.ErrorText = e
		}
		if out == nil {
			out = result["output"]
		}
	}
	if code, ok := exitCode(out); ok {
		res.ExitCode = &code
		if code != 0 && !res.IsError {
			res.IsError = true
			if res.ErrorText == "" {
				res.ErrorText = "exit code " + strconv.Itoa(code)
			}
		}
	}
	if res.IsError && res.ErrorText == "" && res.Text == "" {
		res.ErrorText = "the tool failed"
	}
	return callID, name, res
}

// exitCode reads "exit_code" of a command tool's output object (given as
// an object or as the JSON text of one). Unknown when absent or null.
func exitCode(raw json.RawMessage) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false
	}
	o := object(raw)
	if o == nil || !notNull(o, "exit_code") {
		return 0, false
	}
	v, ok := normalize.Int(o["exit_code"])
	if !ok || v > 1<<31-1 || v < -(1<<31) {
		return 0, false
	}
	return int(v), true
}

// legacyResult reads the tool result the pre-2026 pipeline sent the model
// as text: Python's printed ToolResult, wrapped for XML tools in
// "<tool_result> <tag> … </tag> </tool_result>" (older rows: "<tag> …
// </tag>") and for the others in "Result for name: …":
//
//	<tool_result> <web-search> ToolResult(success=True, output='…') </web-search> </tool_result>
//
// It returns the output and the success flag; legacy is false (the text
// stays as written) unless s is exactly such a result with a boolean
// success and a string (or None) output.
func legacyResult(s string) (output string, success, legacy bool) {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, ")") && !strings.HasSuffix(t, ">") {
		return "", false, false // the common case, at a glance
	}
	if inner, ok := wrapped(t, "tool_result"); ok {
		t = inner
	}
	if strings.HasPrefix(t, "<") {
		end := strings.IndexByte(t, '>')
		if end < 0 {
			return "", false, false
		}
		inner, ok := wrapped(t, t[1:end])
		if !ok {
			return "", false, false
		}
		t = inner
	} else if rest, ok := strings.CutPrefix(t, "Result for "); ok {
		name, call, ok := strings.Cut(rest, ": ")
		if !ok || !tagName(name) {
			return "", false, false
		}
		t = call
	}
	if !strings.HasPrefix(t, "ToolResult(") {
		return "", false, false
	}
	v, ok := ingest.ParsePy(t)
	c, isCall := v.(ingest.PyCall)
	if !ok || !isCall || c.Name != "ToolResult" {
		return "", false, false
	}
	succ, ok := c.Arg("success")
	success, isBool := succ.(bool)
	if !ok || !isBool {
		return "", false, false
	}
	out, _ := c.Arg("output")
	switch o := out.(type) {
	case string:
		return o, success, true
	case nil:
		return "", success, true
	}
	return "", false, false
}

// wrapped is the trimmed text inside "<tag>" and "</tag>" when t is
// exactly that, with a tag name of letters, digits, '_' and '-'.
func wrapped(t, tag string) (string, bool) {
	if !tagName(tag) {
		return "", false
	}
	open, end := "<"+tag+">", "</"+tag+">"
	if len(t) < len(open)+len(end) || !strings.HasPrefix(t, open) || !strings.HasSuffix(t, end) {
		return "", false
	}
	return strings.TrimSpace(t[len(open) : len(t)-len(end)]), true
}

func tagName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && r != '-' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
