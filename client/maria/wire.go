package maria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/jsonx"
)

// wireTask is the JSON of a daemon Task (docs/protocol.md §8.5).
type wireTask struct {
	ID             string          `json:"id"`
	Name           *string         `json:"name"`
	Cwd            string          `json:"cwd"`
	Port           int             `json:"port"`
	Status         string          `json:"status"`
	Created        json.Number     `json:"created"`
	Updated        json.Number     `json:"updated"`
	WebSearch      bool            `json:"web_search"`
	QueuedMessages json.RawMessage `json:"queued_messages"`
	Model          string          `json:"model"`
}

// ParseTask decodes one Task object.
func ParseTask(data []byte) (events.Task, error) {
	var w wireTask
	if err := json.Unmarshal(data, &w); err != nil {
		return events.Task{}, fmt.Errorf("decode task: %w", err)
	}
	if w.ID == "" {
		return events.Task{}, fmt.Errorf("decode task: no id in %s", events.Excerpt(data, 80))
	}
	t := events.Task{
		ID: w.ID, Cwd: w.Cwd, Port: w.Port, Status: w.Status,
		Created: msTime(w.Created), Updated: msTime(w.Updated),
		WebSearch: w.WebSearch, Model: w.Model,
	}
	if w.Name != nil {
		t.Name = *w.Name
	}
	if len(w.QueuedMessages) > 0 && !jsonx.IsNull(w.QueuedMessages) {
		q, err := ParseQueuedMessages(w.QueuedMessages)
		if err != nil {
			return events.Task{}, fmt.Errorf("decode task %s: %w", w.ID, err)
		}
		t.QueuedMessages = q
	}
	return t, nil
}

// ParseTasks decodes {"tasks":[Task…]} (GET /v1/tasks, daemon.tasks.synchronized)
// or a bare array of tasks.
func ParseTasks(data []byte) ([]events.Task, error) {
	data = bytes.TrimSpace(data)
	var raw []json.RawMessage
	if len(data) > 0 && data[0] == '{' {
		var w struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, fmt.Errorf("decode task list: %w", err)
		}
		raw = w.Tasks
	} else if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode task list: %w", err)
	}
	tasks := make([]events.Task, 0, len(raw))
	for _, r := range raw {
		t, err := ParseTask(r)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// wireQueued is a queued message: {"id","message":<message param>,"web_search"?}.
type wireQueued struct {
	ID        jsonx.Raw `json:"id"`
	Message   jsonx.Raw `json:"message"`
	WebSearch bool      `json:"web_search"`
}

// ParseQueuedMessages decodes a JSON array of queued messages, as found in
// snapshots, cancel replies, GET …/queued-messages and Task.queued_messages.
func ParseQueuedMessages(data []byte) ([]events.QueuedMessage, error) {
	var raw []wireQueued
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode queued messages: %w", err)
	}
	out := make([]events.QueuedMessage, 0, len(raw))
	for _, w := range raw {
		out = append(out, events.QueuedMessage{ID: jsonx.ID(w.ID), Text: MessageText(w.Message), WebSearch: w.WebSearch})
	}
	return out, nil
}

// MessageText flattens an OpenAI-style message param or bare content into
// its text: content as a string, a list of parts ({"type":"text","text"},
// {"text"} or bare strings), or the object's own "content".
func MessageText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return ""
	}
	switch raw[0] {
	case '{':
		var m struct {
			Content jsonx.Raw `json:"content"`
			Text    *string   `json:"text"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		if m.Content != nil {
			return ContentText(m.Content)
		}
		if m.Text != nil {
			return *m.Text
		}
		return ""
	default:
		return ContentText(raw)
	}
}

// ContentText flattens message content: a string, or a list of text parts
// (typed, untyped or bare strings) concatenated in order. Non-text parts
// become a short placeholder rather than being dropped.
func ContentText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonx.IsNull(raw) {
		return ""
	}
	switch raw[0] {
	case '"':
		s, _ := jsonx.Unquote(raw)
		return s
	case '[':
		var parts []jsonx.Raw
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		// One text part (the usual) is returned as is, not copied again.
		var out string
		var b strings.Builder
		add := func(s string) {
			switch {
			case s == "":
			case out == "" && b.Len() == 0:
				out = s
			default:
				if out != "" {
					b.WriteString(out)
					out = ""
				}
				b.WriteString(s)
			}
		}
		for _, p := range parts {
			p = bytes.TrimSpace(p)
			if len(p) == 0 {
				continue
			}
			if p[0] == '"' {
				s, _ := jsonx.Unquote(p)
				add(s)
				continue
			}
			var part struct {
				Type string    `json:"type"`
				Text jsonx.Raw `json:"text"`
			}
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			text, isText := "", false
			if len(part.Text) > 0 && !jsonx.IsNull(part.Text) {
				if text, isText = jsonx.Unquote(part.Text); !isText {
					continue // a text that is not a string spoils the part
				}
			}
			switch {
			case isText && (part.Type == "" || part.Type == "text" || part.Type == "input_text" || part.Type == "output_text"):
				add(text)
			case part.Type != "":
				add("[" + part.Type + "]")
			}
		}
		if b.Len() > 0 {
			return b.String()
		}
		return out
	case '{':
		return MessageText(raw)
	}
	return ""
}

// msTime converts integer milliseconds since the epoch; zero for absent or
// unparsable values.
func msTime(n json.Number) time.Time {
	if n == "" {
		return time.Time{}
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && i > 0 {
		return time.UnixMilli(i)
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil && f > 0 {
		return time.UnixMilli(int64(f))
	}
	return time.Time{}
}
