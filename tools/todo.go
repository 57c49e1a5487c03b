package tools

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// Todo status/priority icons of maria's todo tool (§7.7).
var (
	todoStatusIcons   = map[string]string{"✅": "completed", "🔄": "in_progress", "⏳": "pending"}
	todoPriorityIcons = map[string]string{"🔴": "high", "🟡": "medium", "🟢": "low"}
	todoLine          = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(?:\d+\.\s*)?(\S+)\s+(\S+)\s+\[([^\]]*)\]\s?(.*)$`)
	})
)

// ParseTodos reads the full todo list out of maria's todo text
// (FormatTodo): a Read listing, or a Write's "Newly created todos" /
// "Current todo list" section (the "Updated items" section repeats items
// and is skipped). When the text holds no list, a "create" call's list is
// built from its arguments (args are the call's). nil when neither gives
// one.
func ParseTodos(text string, args json.RawMessage) []Todo {
	todos := parseTodoText(text)
	if todos == nil && strings.EqualFold(Arg(args, "action"), "create") {
		todos = todosFromArgs(args)
	}
	return todos
}

func parseTodoText(text string) []Todo {
	var out []Todo
	found := false
	inList := !strings.Contains(text, "📝")
	if strings.HasPrefix(text, "=== Current Session Todo List ===") {
		inList = true
		found = true
	}
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "📝 Newly created todos") || strings.HasPrefix(trim, "📝 Current todo list"):
			inList, found = true, true
			continue
		case strings.HasPrefix(trim, "✨ Updated items") || strings.HasPrefix(trim, "📊"):
			inList = false
			continue
		case strings.HasPrefix(trim, "└─"):
			if inList && len(out) > 0 {
				out[len(out)-1].Notes = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(trim, "└─"), " 📝"))
			}
			continue
		}
		if !inList {
			continue
		}
		m := todoLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t := Todo{ID: m[3], Content: strings.TrimSpace(m[4])}
		for _, icon := range []string{m[1], m[2]} {
			icon = strings.TrimRight(icon, "\ufe0f")
			if s, ok := todoStatusIcons[icon]; ok {
				t.Status = s
			}
			if p, ok := todoPriorityIcons[icon]; ok {
				t.Priority = p
			}
		}
		if t.Status == "" && t.Priority == "" {
			continue
		}
		found = true
		out = append(out, t)
	}
	if !found {
		return nil
	}
	if out == nil {
		out = []Todo{}
	}
	return out
}

// todosFromArgs builds the list a todo "create" call asked for, when its
// text could not be read: each non-empty line (or <task>…</task>) of content.
func todosFromArgs(args json.RawMessage) []Todo {
	content := Arg(args, "content")
	if content == "" {
		return nil
	}
	var items []string
	if strings.Contains(content, "<task>") {
		for _, part := range strings.Split(content, "<task>")[1:] {
			if t, _, ok := strings.Cut(part, "</task>"); ok {
				items = append(items, t)
			}
		}
	} else {
		items = strings.Split(content, "\n")
	}
	prio := NormPriority(Arg(args, "priority"))
	status := NormStatus(Arg(args, "status"))
	var out []Todo
	for _, it := range items {
		it = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(it), "-*•0123456789.)"))
		if it == "" {
			continue
		}
		out = append(out, Todo{Content: it, Status: status, Priority: prio})
	}
	return out
}

// NormStatus is a todo status as perch names it: pending, in_progress or
// completed.
func NormStatus(s string) string {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)) {
	case "completed", "done", "complete":
		return "completed"
	case "inprogress", "active", "doing":
		return "in_progress"
	}
	return "pending"
}

// NormPriority is a todo priority as perch names it: high, medium or low.
func NormPriority(s string) string {
	switch strings.ToLower(s) {
	case "high":
		return "high"
	case "low":
		return "low"
	}
	return "medium"
}

// claudeTaskCreated reads the id Claude Code's TaskCreate result gives the
// new task ("Task #3 created successfully: …").
var claudeTaskCreated = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Task #(\w+) created`)
})

// ClaudeTaskID is the id of the task a TaskCreate result says it created.
func ClaudeTaskID(result string) (string, bool) {
	m := claudeTaskCreated().FindStringSubmatch(result)
	if m == nil {
		return "", false
	}
	return m[1], true
}
