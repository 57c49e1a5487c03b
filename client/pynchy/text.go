package pynchy

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// stripSpeaker removes one leading "<sender>: " that older pynchy versions
// baked into the agent's messages. Only one: "pynchy: pynchy: x" keeps the
// second, which the model itself wrote.
func stripSpeaker(content, sender string) string {
	if sender == "" {
		return content
	}
	if rest, ok := strings.CutPrefix(content, sender+": "); ok {
		return rest
	}
	return content
}

const (
	internalOpen  = "<internal>"
	internalClose = "</internal>"
)

// splitInternal takes the agent's <internal>…</internal> thoughts out of
// its text. An unclosed tag (a cut stream) makes the rest a thought: a
// thought never shows as text. The text is trimmed when a tag was removed,
// as pynchy does.
func splitInternal(s string) (text string, thoughts []string) {
	if !strings.Contains(s, internalOpen) {
		return s, nil
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, internalOpen)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i+len(internalOpen):]
		j := strings.Index(rest, internalClose)
		if j < 0 {
			thoughts = appendThought(thoughts, rest)
			break
		}
		thoughts = appendThought(thoughts, rest[:j])
		rest = rest[j+len(internalClose):]
	}
	return strings.TrimSpace(b.String()), thoughts
}

func appendThought(ts []string, t string) []string {
	if t = strings.TrimSpace(t); t != "" {
		ts = append(ts, t)
	}
	return ts
}

// brainMark starts the host's rewrite of an internal thought: pynchy
// replaces <internal>x</internal> by "🧠 _x_" and a line end before it
// stores or sends the agent's reply.
const brainMark = "🧠 _"

// splitBrain takes the host's "🧠 _thought_" rewrites back out of a reply.
// A rewrite is recognised by its exact form: the mark, a thought that
// neither starts nor ends with white space (pynchy trims it), and a closing
// "_" followed by a line end or the end of the text. Anything else stays
// text. The text is trimmed when a thought was removed.
func splitBrain(s string) (text string, thoughts []string) {
	if !strings.Contains(s, brainMark) {
		return s, nil
	}
	var b strings.Builder
	pos := 0
	// closeAt caches the next "_\n" at or after a position, so a text full
	// of marks is still read in linear time.
	closeAt, closeFrom := -1, -1
	nextClose := func(from int) int {
		if closeFrom >= 0 && from >= closeFrom && (closeAt < 0 || closeAt >= from) {
			return closeAt
		}
		closeFrom = from
		if k := strings.Index(s[from:], "_\n"); k >= 0 {
			closeAt = from + k
		} else {
			closeAt = -1
		}
		return closeAt
	}
	for {
		i := strings.Index(s[pos:], brainMark)
		if i < 0 {
			b.WriteString(s[pos:])
			break
		}
		start := pos + i
		body := start + len(brainMark)
		end, next := -1, 0
		if c := nextClose(body); c >= 0 {
			end, next = c, c+2
		} else if strings.HasSuffix(s, "_") && len(s)-1 > body {
			end, next = len(s)-1, len(s)
		}
		if end > body {
			t := s[body:end]
			if strings.TrimSpace(t) == t {
				b.WriteString(s[pos:start])
				thoughts = append(thoughts, t)
				pos = next
				continue
			}
		}
		b.WriteString(s[pos:body])
		pos = body
	}
	if len(thoughts) == 0 {
		return s, nil
	}
	return strings.TrimSpace(b.String()), thoughts
}

var hostWrap = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*<host>([\s\S]*?)</host>\s*$`)
})

// hostMessage reports whether a reply is wholly wrapped in <host>…</host>
// (a message for the user from the host, not the model) and returns its
// inner text.
func hostMessage(s string) (string, bool) {
	if !strings.Contains(s, "<host>") {
		return "", false
	}
	m := hostWrap().FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1]), true
}

var commandHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(✅|❌) Command output \(exit (-?\d+)\):\n`)
})

// commandOutput reads a direct shell command's message: "✅ Command output
// (exit 0):" or "❌ … (exit N):", then the output in a fence. output is the
// fenced text byte for byte; exit is nil when the header does not say.
func commandOutput(content string) (output string, exit *int, failed bool) {
	m := commandHead().FindStringSubmatchIndex(content)
	if m == nil {
		return content, nil, strings.HasPrefix(content, "❌")
	}
	failed = content[m[2]:m[3]] == "❌"
	if n, err := strconv.Atoi(content[m[4]:m[5]]); err == nil {
		exit = &n
		failed = n != 0
	}
	body := content[m[1]:]
	if len(body) >= 8 && strings.HasPrefix(body, "```\n") && strings.HasSuffix(body, "\n```") {
		body = body[4 : len(body)-4]
	}
	return body, exit, failed
}

// joinParts joins non-empty parts with a blank line.
func joinParts(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}
