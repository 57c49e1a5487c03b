package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/perch-tui/perch/board"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/sanitize"
	"github.com/perch-tui/perch/tui/chrome"
)

// changeJSON is one line of perch watch --json.
type changeJSON struct {
	Type       string `json:"type"` // "session" (a source's change is "source", watch_source.go)
	At         string `json:"at"`
	Source     string `json:"source"`
	System     string `json:"system,omitempty"`
	Session    string `json:"session"`
	Name       string `json:"name,omitempty"`
	Old        string `json:"old"`
	New        string `json:"new"`
	Reason     string `json:"reason,omitempty"`
	ReasonText string `json:"reason_text,omitempty"`
	Detail     string `json:"detail,omitempty"` // why the run failed, why a message was refused
}

// startBoard opens every source of the command's connection settings
// and starts the board on them.
func (c *conn) startBoard(ctx context.Context, env Env, opts board.Options) (*board.Board, error) {
	sources, err := c.boardSources(ctx, env)
	if err != nil {
		return nil, err
	}
	opts.StateDir = outboxRoot(env)
	return board.Start(ctx, sources, opts), nil
}

// runWatch is perch watch: one line per change of a session's state
// across every source, until interrupted, and one per source going down
// or coming back (watch_source.go). Changes are of state, not of events:
// a source that reconnects and lists its sessions again prints only what
// changed meanwhile. Every connection state of a source also goes to
// stderr. With --json --snapshot the first line is every session as it
// stands.
func runWatch(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "watch")
	var c conn
	c.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	snapshot := fs.Bool("snapshot", false, `with --json: first print {"type":"snapshot","sources","sessions"} of every session, then the changes`)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *snapshot && !*asJSON {
		return usagef("--snapshot needs --json (perch tasks --all prints the sessions for people)")
	}
	var (
		mu   sync.Mutex
		werr error
		// held: the changes seen before the snapshot is printed (with
		// --snapshot); nil once it is.
		held  []board.Change
		snapT time.Time
	)
	holding := *snapshot
	write := func(w io.Writer, line string) {
		if _, err := io.WriteString(w, line); err != nil && werr == nil {
			werr = err
		}
	}
	printChange := func(ch board.Change) { // mu held
		if *asJSON {
			data, _ := json.Marshal(changeJSON{Type: "session", At: ch.At.UTC().Format(time.RFC3339Nano), Source: ch.Source, System: ch.System,
				Session: ch.Session, Name: ch.Name, Old: string(ch.Old), New: string(ch.New), Reason: string(ch.Reason), ReasonText: ch.Reason.Text(), Detail: ch.Detail})
			write(env.Stdout, string(data)+"\n")
			return
		}
		write(env.Stdout, changeLine(ch)+"\n")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	said := map[string]string{} // each source's last line (OnSource is called one at a time)
	updown := map[string]string{}
	b, err := c.startBoard(ctx, env, board.Options{
		SummarizeAll: *snapshot, // its rows' tokens, cost and last reply
		OnChange: func(ch board.Change) {
			mu.Lock()
			defer mu.Unlock()
			if holding {
				held = append(held, ch)
				return
			}
			printChange(ch)
		},
		OnSource: func(s board.SourceState) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if line, st, ok := sourceChange(s, updown[s.Name], *asJSON, now); ok {
				updown[s.Name] = st
				write(env.Stdout, line+"\n")
			}
			line := s.Line(now)
			if said[s.Name] == line {
				return
			}
			said[s.Name] = line
			write(env.Stderr, fmt.Sprintf("perch: source %s: %s\n", sanitize.Line(s.Name), line))
		},
	})
	if err != nil {
		return err
	}
	if *snapshot {
		if err := waitSettled(ctx, b); err == nil {
			snapT = time.Now()
			sources, rows := b.Snapshot(board.Filter{})
			data, _ := json.Marshal(snapshotJSON{Type: "snapshot", At: snapT.UTC().Format(time.RFC3339Nano), boardOut: boardJSON(sources, rows, snapT)})
			mu.Lock()
			write(env.Stdout, string(data)+"\n")
			// What changed before the snapshot is in it; what changed
			// since follows it.
			for _, ch := range held {
				if !ch.At.Before(snapT) {
					printChange(ch)
				}
			}
			held, holding = nil, false
			mu.Unlock()
		}
	}
	<-ctx.Done()
	b.Wait()
	mu.Lock()
	defer mu.Unlock()
	if werr != nil {
		return fmt.Errorf("watch: %w", werr)
	}
	return ctx.Err()
}

// changeLine is a change for people: "source  name (id)  old → new  why".
func changeLine(ch board.Change) string {
	old := string(ch.Old)
	if old == "" {
		old = "new"
	}
	line := fmt.Sprintf("%s  %s  %s → %s", sanitize.Line(ch.Source), sessionLabel(ch.Name, ch.Session), old, ch.New)
	if t := ch.Reason.Text(); t != "" {
		line += "  needs you: " + t
	}
	return line
}

// sessionLabel is a session's name and short id ("fix tests (3f2b9c1a)").
func sessionLabel(name, id string) string {
	id = sanitize.Line(id)
	if name == "" {
		return id
	}
	return fmt.Sprintf("%s (%s)", clip(name, 40), shortID(id))
}

// settleTimeout bounds how long tasks --all waits for a slow source: it
// then prints what it has, the slow source's row saying it is connecting.
const settleTimeout = 15 * time.Second

// runTasksAll is perch tasks --all: the board once, every source's row
// and every session's, as the TUI's board shows them.
func runTasksAll(ctx context.Context, env Env, c *conn, asJSON bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Every session's last run: its tokens, cost and last reply.
	b, err := c.startBoard(ctx, env, board.Options{SummarizeAll: true})
	if err != nil {
		return err
	}
	defer func() { cancel(); b.Wait() }()
	if err := waitSettled(ctx, b); err != nil {
		return err
	}
	sources, rows := b.Snapshot(board.Filter{})
	now := time.Now()
	if asJSON {
		return writeJSON(env.Stdout, boardJSON(sources, rows, now))
	}
	return writeBoardText(env.Stdout, sources, rows, now)
}

type sourceJSON struct {
	Name   string `json:"name"`
	System string `json:"system,omitempty"`
	URL    string `json:"url"`
	State  string `json:"state"`
	Line   string `json:"line"`
	Error  string `json:"error,omitempty"`
}

type rowJSON struct {
	Source     string   `json:"source"`
	System     string   `json:"system,omitempty"`
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Reason     string   `json:"reason,omitempty"`
	ReasonText string   `json:"reason_text,omitempty"`
	Detail     string   `json:"detail,omitempty"`
	Unread     int      `json:"unread"`
	Queued     int      `json:"queued"`
	Held       int      `json:"held"`
	Updated    int64    `json:"updated,omitempty"`  // Unix ms
	Tokens     int64    `json:"tokens,omitempty"`   // the last run's
	CostUSD    *float64 `json:"cost_usd,omitempty"` // the last run's
	// The whole session's, where the system lists them (a local CLI's):
	// no session_cost_usd with session_tokens is an unknown cost.
	SessionTokens  int64    `json:"session_tokens,omitempty"`
	SessionCostUSD *float64 `json:"session_cost_usd,omitempty"`
	LastReply      string   `json:"last_reply,omitempty"`
	Note           string   `json:"note,omitempty"` // what the board could not learn of the session
}

type boardOut struct {
	Sources  []sourceJSON `json:"sources"`
	Sessions []rowJSON    `json:"sessions"`
}

func boardJSON(sources []board.SourceState, rows []board.Row, now time.Time) boardOut {
	out := boardOut{Sources: []sourceJSON{}, Sessions: []rowJSON{}}
	for _, s := range sources {
		out.Sources = append(out.Sources, sourceJSON{Name: s.Name, System: s.System, URL: s.URL, State: string(s.Conn), Line: s.Line(now), Error: s.Err})
	}
	for _, r := range rows {
		j := rowJSON{Source: r.Source, System: r.System, ID: r.ID, Name: r.Name, Status: string(r.Status), Reason: string(r.Reason),
			ReasonText: r.Reason.Text(), Detail: r.Detail, Unread: r.Unread, Queued: r.Queued, Held: r.Held, Tokens: r.Tokens, LastReply: r.LastReply, Note: r.Note}
		if !r.Updated.IsZero() {
			j.Updated = r.Updated.UnixMilli()
		}
		if r.HasCost {
			cost := r.Cost
			j.CostUSD = &cost
		}
		j.SessionTokens = r.SessionTokens
		if r.HasSessionCost {
			cost := r.SessionCost
			j.SessionCostUSD = &cost
		}
		out.Sessions = append(out.Sessions, j)
	}
	return out
}

func writeBoardText(w io.Writer, sources []board.SourceState, rows []board.Row, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tSYSTEM\tSTATE")
	for _, s := range sources {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", clip(sanitize.Line(s.Name), 40), or(s.System, "-"), clip(s.Line(now), 160))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "\nNo sessions.")
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// RUN TOKENS and RUN COST are the last run's, as the board's RUN
	// TOKENS/$; SESSION TOKENS and SESSION COST the whole session's, as
	// its SESSION TOK/$ ($? where the cost is unknown).
	fmt.Fprintln(tw, "SOURCE\tID\tSTATUS\tNEEDS YOU\tUNREAD\tQUEUED\tHELD\tAGE\tRUN TOKENS\tRUN COST\tSESSION TOKENS\tSESSION COST\tNAME\tLAST REPLY")
	for _, r := range rows {
		needs := "-"
		if r.Reason != board.None {
			needs = string(r.Reason)
		}
		tokens, cost := "-", "-"
		if r.Tokens > 0 {
			tokens = chrome.Tokens(r.Tokens)
		}
		if r.HasCost {
			cost = events.CostText(r.Cost)
		}
		sTokens, sCost := "-", "-"
		if r.SessionTokens > 0 {
			sTokens, sCost = chrome.Tokens(r.SessionTokens), "$?"
		}
		if r.HasSessionCost {
			sCost = events.CostText(r.SessionCost)
		}
		last := clip(r.LastReply, 60)
		if last == "" && r.Note != "" {
			last = "(" + clip(sanitize.Line(r.Note), 60) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clip(sanitize.Line(board.SourceLabel(r.Source)), 24), shortID(sanitize.Line(r.ID)),
			r.Status, needs, r.Unread, r.Queued, r.Held, age(now, r.Updated), tokens, cost, sTokens, sCost, or(clip(r.Name, 40), "-"), or(last, "-"))
	}
	return tw.Flush()
}
