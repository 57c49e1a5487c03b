package events

func keyArg(name string, c ToolCall) string { return "" }
