package suna

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/normalize"
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
