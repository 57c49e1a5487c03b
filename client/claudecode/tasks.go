package claudecode

import (
	"encoding/json"
	"strconv"

	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/idset"
	"github.com/perch-tui/perch/tools"
)

// taskList is the plan Claude Code 2.1 keeps with its Task* tools: a
// TaskCreate adds a task (its id is in the result, "Task #3 created …"),
// a TaskUpdate changes one (status "deleted" removes it). The list changes
// when a call succeeds, so it is read from the results, with the
// arguments of the calls they answer.
type taskList struct {
	args  map[string]json.RawMessage // TaskCreate/TaskUpdate call id → arguments
	todos []events.Todo
}

// note remembers the arguments of a turn's Task* calls.
func (l *taskList) note(calls []events.ToolCall) {
	for _, c := range calls {
		if c.Name != tools.ClaudeTaskCreate && c.Name != tools.ClaudeTaskUpdate || c.ID == "" {
			continue
		}
		if l.args == nil {
			l.args = make(map[string]json.RawMessage)
		}
		l.args[c.ID] = c.Args
	}
}

// result applies a call's result; it returns the whole list when the
// call changed it, nil otherwise.
func (l *taskList) result(t *events.ToolEvent) []events.Todo {
	if t == nil || t.Result == nil || t.Result.IsError {
		return nil
	}
	args, ok := l.args[t.Call.ID]
	if !ok {
		return nil
	}
	delete(l.args, t.Call.ID)
	a := normalize.AsObject(args)
	switch t.Name {
	case tools.ClaudeTaskCreate:
		id, ok := tools.ClaudeTaskID(t.Result.Text)
		if !ok {
			id = strconv.Itoa(len(l.todos) + 1)
		}
		status := normalize.StrField(a, "status")
		if status == "" {
			status = "pending"
		}
		l.todos = append(l.todos, events.Todo{ID: id, Content: normalize.FirstStr(a, "subject", "description", "activeForm"), Status: status})
	case tools.ClaudeTaskUpdate:
		id := normalize.StrField(a, "taskId")
		if id == "" {
			if n, ok := normalize.Int(a["taskId"]); ok {
				id = strconv.FormatInt(n, 10)
			}
		}
		i := l.find(id)
		if i < 0 {
			return nil
		}
		if normalize.StrField(a, "status") == "deleted" {
			l.todos = append(l.todos[:i:i], l.todos[i+1:]...)
			break
		}
		if st := normalize.StrField(a, "status"); st != "" {
			l.todos[i].Status = st
		}
		if sub := normalize.StrField(a, "subject"); sub != "" {
			l.todos[i].Content = sub
		}
	default:
		return nil
	}
	return append([]events.Todo(nil), l.todos...)
}

func (l *taskList) find(id string) int {
	for i, t := range l.todos {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// todoCalls are the TodoWrite calls (each the whole list) whose results
// have not come: the list changes when Claude Code ran the call, so a call
// it refused (permission denied, the user said no: an error result)
// changes nothing.
type todoCalls struct {
	args map[string]json.RawMessage // call id → arguments
	done idset.Set                  // calls whose result was applied
}

func (c *todoCalls) note(calls []events.ToolCall) {
	for _, tc := range calls {
		if tc.Name != tools.ClaudeTodoWrite || tc.ID == "" || len(tc.Args) == 0 || c.done.Has(tc.ID) {
			continue
		}
		if c.args == nil {
			c.args = make(map[string]json.RawMessage)
		}
		c.args[tc.ID] = tc.Args
	}
}

// result is the list a successful TodoWrite result sets (ok false for
// any other result).
func (c *todoCalls) result(t *events.ToolEvent) ([]events.Todo, bool) {
	if t == nil || t.Result == nil {
		return nil, false
	}
	args, ok := c.args[t.Call.ID]
	if !ok {
		return nil, false
	}
	delete(c.args, t.Call.ID)
	c.done.Add(t.Call.ID)
	if t.Result.IsError {
		return nil, false
	}
	list := normalize.AsList(normalize.AsObject(args)["todos"])
	if list == nil {
		return nil, false
	}
	todos := make([]events.Todo, 0, len(list))
	for i, raw := range list {
		o := normalize.AsObject(raw)
		if o == nil {
			continue
		}
		id := normalize.StrField(o, "id")
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		todos = append(todos, events.Todo{ID: id, Content: normalize.FirstStr(o, "content", "activeForm"),
			Status: normalize.StrField(o, "status"), Priority: normalize.StrField(o, "priority")})
	}
	return todos, true
}
