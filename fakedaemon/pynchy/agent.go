package pynchy

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

func decodeBody(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(v)
}

// The scripted agent. A run goes as pynchy's does (activity on, the
// user_input of the messages that started it, system init, thinking, a
// tool call and its result, more thinking, the reply's text block, the
// Claude SDK's result_meta, the reply message, activity off) and checks for
// piped follow-ups between steps. What the prompt asks picks the script:
//
//   - "fail": the run ends in an error after its tool call (result_meta
//     with is_error and a host "⚠️ Agent error occurred" message);
//   - "nan": the result_meta's cost and a usage count are NaN, and the
//     tool's input has a NaN timeout;
//   - anything else: a successful run.

// step waits StepDelay and the gate; false when the server closes.
func (s *Server) step() bool {
	if d := s.opts.StepDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return false
		}
	}
	s.mu.Lock()
	for jid, n := range s.holdAt {
		if c := s.chats[jid]; c != nil && len(c.rows) >= n {
			delete(s.holdAt, jid)
			s.holdLocked()
		}
	}
	g := s.gate
	s.mu.Unlock()
	select {
	case <-g:
	case <-s.ctx.Done():
		return false
	}
	return s.ctx.Err() == nil
}

// locked runs f under s.mu.
func (s *Server) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// consume shows the messages piped into the run as the agent reads them:
// a user_input trace each (never stored). It returns them.
func (s *Server) consume(c *chat) []string {
	var got []string
	s.locked(func() {
		got, c.waiting = c.waiting, nil
		for _, m := range got {
			s.trace(c, "user_input", obj{{"sender_name", "You"}, {"content", m}, {"source", "user"}}, false, "")
		}
	})
	return got
}

func (s *Server) nextToolID() string {
	s.tools++
	return fmt.Sprintf("toolu_%02d", s.tools)
}

func usage(in, out int, nan bool) obj {
	var input any = in
	if nan {
		input = math.NaN()
	}
	return obj{{"input_tokens", input}, {"cache_creation_input_tokens", 120}, {"cache_read_input_tokens", 2400},
		{"output_tokens", out}, {"server_tool_use", obj{{"web_search_requests", 0}}}, {"service_tier", "standard"}}
}

func (s *Server) run(c *chat, prompt string) {
	defer s.runs.Done()
	lower := strings.ToLower(prompt)
	fail, nan := strings.Contains(lower, "fail"), strings.Contains(lower, "nan")
	session := fmt.Sprintf("sess-%s-%d", c.jid, c.sends)
	end := func() {
		s.locked(func() { s.activity(c, false) })
	}
	s.locked(func() {
		s.activity(c, true)
		s.trace(c, "user_input", obj{{"sender_name", "You"}, {"content", prompt}, {"source", "user"}}, false, "")
	})
	script := []func(){
		func() {
			s.trace(c, "system", obj{{"subtype", "init"}, {"data", obj{{"session_id", session}, {"model", "claude-sonnet-4-5"}}}}, true, "")
		},
		func() {
			s.trace(c, "thinking", obj{{"thinking", "The user asks: " + prompt + "\nI'll list the files first."}}, true, "")
		},
		func() {
			input := obj{{"command", "ls"}}
			if nan {
				input = append(input, kv{"timeout", math.NaN()})
			}
			s.trace(c, "tool_use", obj{{"tool_name", "Bash"}, {"tool_input", input}}, true, "")
		},
	}
	for _, f := range script {
		if !s.step() {
			end()
			return
		}
		s.locked(f)
	}
	piped := s.consumeAfterStep(c)
	if !s.step() {
		end()
		return
	}
	if fail {
		s.locked(func() {
			ts := s.now()
			s.trace(c, "result_meta", obj{{"subtype", "error_during_execution"}, {"duration_ms", 812}, {"duration_api_ms", 640},
				{"is_error", true}, {"num_turns", 1}, {"session_id", session}, {"total_cost_usd", 0.0042},
				{"usage", usage(9, 31, false)}}, true, ts)
			s.storeMessage(c, "host", "⚠️ Agent error occurred", ts, true)
			s.activity(c, false)
		})
		return
	}
	s.locked(func() {
		s.trace(c, "tool_result", obj{{"tool_use_id", s.nextToolID()}, {"content", "README.md\nmain.go\n"}, {"is_error", false}}, true, "")
	})
	piped = append(piped, s.consumeAfterStep(c)...)
	if !s.step() {
		end()
		return
	}
	s.locked(func() {
		s.trace(c, "thinking", obj{{"thinking", "Two files. Enough to answer."}}, true, "")
	})
	if !s.step() {
		end()
		return
	}
	piped = append(piped, s.consume(c)...)
	for {
		reply := replyText(prompt, piped, s.opts.Agent)
		s.locked(func() {
			s.trace(c, "text", obj{{"text", reply}}, false, "")
		})
		if !s.step() {
			end()
			return
		}
		more := false
		s.locked(func() {
			ts := s.now()
			var cost any = 0.0123
			if nan {
				cost = math.NaN()
			}
			s.trace(c, "result_meta", obj{{"subtype", "success"}, {"duration_ms", 5123}, {"duration_api_ms", math.NaN()},
				{"is_error", false}, {"num_turns", 2}, {"session_id", session}, {"total_cost_usd", cost},
				{"usage", usage(12, 400, nan)}}, true, ts)
			s.storeMessage(c, s.opts.Agent, strings.ReplaceAll(reply, "<internal>checked with ls</internal>", "🧠 _checked with ls_"), ts, true)
			more = len(c.waiting) > 0
			if !more {
				s.activity(c, false)
			}
		})
		if !more {
			return
		}
		// A follow-up came in after the agent's last look: it is answered
		// in the same activity window.
		if !s.step() {
			end()
			return
		}
		prompt, piped = "your follow-up", s.consume(c)
		s.locked(func() {
			s.trace(c, "thinking", obj{{"thinking", "A follow-up arrived: " + strings.Join(piped, " / ")}}, true, "")
		})
		if !s.step() {
			end()
			return
		}
	}
}

// consumeAfterStep waits a step, then consumes piped messages.
func (s *Server) consumeAfterStep(c *chat) []string {
	if !s.step() {
		return nil
	}
	return s.consume(c)
}

// replyText is the agent's final text: markdown, an internal thought (which
// the host rewrites before storing the reply) and what the piped
// follow-ups said.
func replyText(prompt string, piped []string, agent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Here is what I found for **%s**:\n\n- `README.md`\n- `main.go`\n", prompt)
	for _, p := range piped {
		fmt.Fprintf(&b, "\nYou also said: %q. Noted.\n", p)
	}
	b.WriteString("\n<internal>checked with ls</internal>")
	_ = agent
	return b.String()
}
