package suna

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/normalize"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
	"github.com/perch-tui/perch/sse"
)

// Follow delivers a thread: its history (Synced), then the running agent
// run's stream, then — when the run's status says it ended — the history
// again as a Reset (the history is the judge: it holds the usage and the
// message ids the stream lacks), then the next run, and so on.
func (l *Live) Follow(ctx context.Context, sessionID string, on func(client.Update)) error {
	f := &follower{l: l, id: sessionID, on: on}
	return f.run(ctx)
}

// FollowSettled is Follow without the running run's events
// (client.SettledFollower): its stream is only watched for the run's end,
// and the history read at the end brings the run whole. On the bench's
// 20,000-frame run this leaves out the decoding of every frame. A run
// running when it starts is joined without reading the history first:
// the history read at the run's end is the first update.
func (l *Live) FollowSettled(ctx context.Context, sessionID string, on func(client.Update)) error {
	f := &follower{l: l, id: sessionID, on: on, settled: true}
	return f.run(ctx)
}

type follower struct {
	l  *Live
	id string
	on func(client.Update)

	d       *Decoder
	seen    map[string]bool // history rows fed to d, by message id
	started bool            // the first update went out
	failing bool            // a load failed; the next success says live
	settled bool            // FollowSettled: a running run's frames are not decoded
	join    *join           // a running run joined with rows in the history (see load)
}

// join is what the follower keeps when it joined a running run whose
// finalized rows the first update showed: the same session without them,
// which the run's stream builds on, and the stream's events until its
// catch-up has rebuilt those rows.
type join struct {
	base []events.Event // the history without the run's rows, and the run state
	want int            // assistant rows the first update showed
	held []events.Event // the stream's events since
}

// histRowHead is the part of a history row the seam needs.
type histRowHead struct {
	MessageID string
	Type      string
	CreatedAt string
}

// rowHead reads a history row's head (a member that is not a string is
// left empty, as json.Unmarshal into histRowHead leaves it).
func rowHead(raw []byte) histRowHead {
	h, _, _ := rowHeadStamp(raw)
	return h
}

// rowHeadStamp reads a row's head and, in the same pass over it, its
// stamp as the history's order reads it (readStamp; ok as readStamp's).
func rowHeadStamp(raw []byte) (h histRowHead, st stamp, ok bool) {
	ok = jsonx.Members(raw, func(k string, v []byte) {
		st.member(k, v)
		var dst *string
		switch k {
		case "message_id":
			dst = &h.MessageID
		case "type":
			dst = &h.Type
		case "created_at":
			dst = &h.CreatedAt
		default:
			return
		}
		if len(v) > 0 && v[0] == '"' {
			*dst, _ = jsonx.Unquote(v)
		}
	})
	return h, st, ok
}

// historyRows splits the history route's answer, {"messages": [...]},
// into its rows (sharing data's memory), as json.Unmarshal into a
// []json.RawMessage field does: no messages member, or null, is no rows.
// It reads the body once with jsonx, not twice (encoding/json checks a
// body whole before it decodes it), then each row's head.
func historyRows(data []byte) ([]json.RawMessage, error) {
	m, ok := jsonx.Object(data)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	raw, found := m["messages"]
	if !found || string(raw) == "null" {
		return nil, nil
	}
	rows, ok := jsonx.List(raw)
	if !ok {
		return nil, errors.New(`"messages" is not a list`)
	}
	return rows, nil
}

func (f *follower) run(ctx context.Context) error {
	poke, done := f.l.pokeChan(f.id)
	defer done()
	reset := true
	var last string // the run last followed or seen ended
	for {
		var runs []wireRun
		if err := f.retry(ctx, func() (err error) { runs, err = f.l.runs(ctx, f.id); return err }); err != nil {
			return err
		}
		var cur *wireRun
		if len(runs) > 0 {
			cur = &runs[0]
		}
		if f.settled && !f.started && cur.running() {
			// Joining a running run settled: the history read when it
			// ends replaces whatever is read now (a Reset), so it is not
			// read twice. Nothing goes out until then.
			if f.d == nil {
				f.d, f.seen = NewDecoder(), map[string]bool{}
			}
		} else if err := f.load(ctx, cur, reset); err != nil {
			return err
		}
		if cur.running() {
			if err := f.follow(ctx, *cur); err != nil {
				return err
			}
			last, reset = cur.ID, true // the run ended: the history is read again, whole
			continue
		}
		if cur != nil {
			last = cur.ID
		}
		// Idle: wait for the thread's next run.
		for {
			t := time.NewTimer(f.l.t.poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-poke:
				t.Stop()
			case <-t.C:
			}
			var rs []wireRun
			if err := f.retry(ctx, func() (err error) { rs, err = f.l.runs(ctx, f.id); return err }); err != nil {
				return err
			}
			if len(rs) > 0 && rs[0].ID != last {
				// A new run. One still running adds its new rows (the
				// prompt) and is followed; one over already is read whole.
				reset = !rs[0].running()
				break
			}
		}
	}
}

// load reads the history and sends it. reset: start over with a fresh
// decoder (the first load, or after a run); else only rows not yet seen
// are sent. While cur runs, its rows other than the user's are left to
// its stream's catch-up (the seam: nothing twice).
func (f *follower) load(ctx context.Context, cur *wireRun, reset bool) error {
	var messages []json.RawMessage
	u := f.l.api.endpoint("threads", f.id, "messages") + "?optimized=false&order=asc"
	if err := f.retry(ctx, func() error {
		var data []byte
		if err := f.l.api.get(ctx, u, &data); err != nil {
			return err
		}
		var err error
		messages, err = historyRows(data)
		if err != nil {
			return fmt.Errorf("GET %s: the answer is not the JSON a Suna API sends (is --url the API base?): %w", u, err)
		}
		return nil
	}); err != nil {
		return err
	}
	evs, left, err := f.decodeRows(ctx, messages, cur, reset)
	if err != nil {
		return err
	}
	st := events.StatusIdle
	if cur.running() {
		st = events.StatusGenerating
		f.d.running = true
	}
	evs = append(evs, events.Event{Kind: events.KindRunState, RunStatus: st})
	f.join = nil
	if reset && left && !f.settled {
		// The history holds what the running run finalized already: the
		// update shows it (an export of the thread now keeps it), and the
		// run's stream, whose catch-up brings it again, goes on from the
		// session without it once it has (see follow).
		shown, want, err := decodeAll(ctx, messages)
		if err != nil {
			return err
		}
		f.join = &join{base: evs, want: want}
		evs = append(shown, events.Event{Kind: events.KindRunState, RunStatus: st})
	}
	f.on(client.Update{Reset: reset && f.started, Events: evs, Synced: true})
	f.started = true
	return nil
}

// decodeAll decodes a history whole, as the importer does, with a decoder
// of its own; want is how many assistant rows it holds.
func decodeAll(ctx context.Context, messages []json.RawMessage) ([]events.Event, int, error) {
	d := NewDecoder()
	h := history{rows: make([]histRow, 0, len(messages))}
	for i, raw := range messages {
		st, ok := readStamp(raw)
		h.noteStamp("message "+strconv.Itoa(i+1), st, ok)
		h.rows[len(h.rows)-1].raw = raw
	}
	var evs []events.Event
	h.decode(ctx, d, func(batch []events.Event) { evs = append(evs, batch...) })
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	return evs, d.assistantRows.Len(), nil
}

// decodeRows decodes the history's rows as the importer decodes a history
// file, into f's decoder (a new one when reset), leaving out rows already
// sent and, while cur runs, its rows but the user's (see load); left says
// whether it left out any. Each row is read once for its head and its
// place in time (the importer's first pass, readHistory's, reads a file's
// rows for their times alone), then decoded in time order.
func (f *follower) decodeRows(ctx context.Context, messages []json.RawMessage, cur *wireRun, reset bool) (_ []events.Event, left bool, _ error) {
	var since time.Time
	if cur.running() {
		since, _ = parseTime(cur.StartedAt)
	}
	if reset || f.d == nil {
		f.d, f.seen = NewDecoder(), map[string]bool{}
	}
	f.d.Deltas = false // whole rows, decoded as the importer does
	h := history{rows: make([]histRow, 0, len(messages))}
	for _, raw := range messages {
		hd, st, ok := rowHeadStamp(raw)
		if hd.MessageID != "" && f.seen[hd.MessageID] {
			continue
		}
		if !since.IsZero() && hd.Type != "user" {
			if at, ok := parseTime(hd.CreatedAt); ok && !at.Before(since) {
				left = true
				continue // the running run's: its stream brings it
			}
		}
		if hd.MessageID != "" {
			f.seen[hd.MessageID] = true
		}
		h.noteStamp("message "+strconv.Itoa(len(h.rows)+1), st, ok)
		h.rows[len(h.rows)-1].raw = raw
	}
	var evs []events.Event
	h.decode(ctx, f.d, func(batch []events.Event) { evs = append(evs, batch...) })
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	return evs, left, nil
}

// follow reads a running run's stream until its status says it ended
// (nil), ctx ends, or the server refuses the stream for good.
func (f *follower) follow(ctx context.Context, r wireRun) error {
	ctx2, cancel := context.WithCancel(ctx)
	defer cancel()
	f.d.Deltas = true
	var (
		lastID   string
		lastData atomic.Int64 // unix nanos of the last frame other than a ping
		ended    atomic.Bool
		check    = make(chan struct{}, 1)
		wg       sync.WaitGroup
	)
	lastData.Store(time.Now().UnixNano())
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.watch(ctx2, r.ID, &lastData, check, func() { ended.Store(true); cancel() })
	}()
	defer func() { f.join = nil }() // the run's end reads the history again, whole
	// rejoin starts the session over from the history without the run's
	// rows and what the stream brought since (see load).
	rejoin := func() {
		j := f.join
		f.join = nil
		f.on(client.Update{Reset: true, Events: append(j.base, j.held...)})
	}
	onFrame := func(fr events.Frame) {
		data := fr.Data
		if id := eventID(data); id != "" {
			lastID = id
		}
		if isPing(data) {
			if f.join != nil && !f.settled {
				rejoin() // quiet: the catch-up is over, whatever it lacked
			}
			return // liveness only
		}
		lastData.Store(time.Now().UnixNano())
		if f.settled {
			if mayEnd(data) {
				select {
				case check <- struct{}{}:
				default:
				}
			}
			return
		}
		evs := f.d.Decode(data)
		for _, ev := range evs {
			if (ev.Kind == events.KindRunState && ev.RunStatus != events.StatusGenerating) ||
				(ev.Kind == events.KindNotice && ev.Level == events.LevelError) {
				// The stream says the run ended (or failed): ask the judge now.
				select {
				case check <- struct{}{}:
				default:
				}
				break
			}
		}
		if j := f.join; j != nil {
			// The catch-up replays what the first update showed: its
			// events wait until it has rebuilt as many assistant rows.
			j.held = append(j.held, evs...)
			if f.d.assistantRows.Len() >= j.want {
				rejoin()
			}
			return
		}
		if len(evs) > 0 {
			f.on(client.Update{Events: evs})
		}
	}
	onState := func(st sse.ConnState) {
		f.on(client.Update{State: &st})
	}
	h := http.Header{}
	if f.l.api.token != "" {
		h.Set("Authorization", "Bearer "+f.l.api.token)
	}
	err := sse.Subscribe(ctx2, sse.Config{
		URL:             func() string { return f.l.streamURL(r.ID, lastID) },
		Header:          h,
		Client:          f.l.api.hc,
		Initial:         f.l.t.retry,
		Max:             f.l.t.retryMax,
		CleanCloseDelay: f.l.t.retry,
		Server:          "a Suna API",
	}, onFrame, onState)
	cancel()
	wg.Wait()
	switch {
	case ended.Load():
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.Canceled):
		return ctx.Err()
	}
	var se *sse.StatusError
	if errors.As(err, &se) && se.Status/100 == 4 {
		// The same words as the REST routes' refusals (a token hint).
		return &APIError{Method: http.MethodGet, URL: se.URL, Status: se.Status, Message: hideToken(se.Message, f.l.api.token)}
	}
	return err
}

// watch asks for the run's status whenever the stream has been quiet for
// a poll interval, or when check says the stream reported an end; when
// the run is no longer running it calls over.
func (f *follower) watch(ctx context.Context, runID string, lastData *atomic.Int64, check <-chan struct{}, over func()) {
	tick := time.NewTicker(max(f.l.t.poll/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-check:
		case <-tick.C:
			if time.Since(time.Unix(0, lastData.Load())) < f.l.t.poll {
				continue
			}
		}
		st, err := f.l.runStatus(ctx, runID)
		var ae *APIError
		switch {
		case err == nil && st.Status != "" && st.Status != "running":
			over()
			return
		case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
			over() // the run is gone
			return
		case err == nil:
			// Still running: quiet again from now.
			lastData.Store(time.Now().UnixNano())
		}
	}
}

// retry runs fn until it succeeds, ctx ends, or the server refuses for
// good (a 4xx other than 408/429); failures in between are reported as
// reconnecting states.
func (f *follower) retry(ctx context.Context, fn func() error) error {
	delay := f.l.t.retry
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			if f.failing {
				f.failing = false
				st := sse.ConnState{Phase: sse.PhaseLive, Since: time.Now()}
				f.on(client.Update{State: &st})
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.Status/100 == 4 && ae.Status != 408 && ae.Status != 429 {
			st := sse.ConnState{Phase: sse.PhaseFailed, Err: err, Since: time.Now()}
			f.on(client.Update{State: &st})
			return err
		}
		f.failing = true
		st := sse.ConnState{Phase: sse.PhaseReconnecting, Attempt: attempt, RetryIn: delay, Err: err, Since: time.Now()}
		f.on(client.Update{State: &st})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, f.l.t.retryMax)
	}
}

var eventIDKey = []byte(`"_event_id"`)

// eventID is the frame's injected _event_id (Suna appends it last).
func eventID(data []byte) string {
	i := bytes.LastIndex(data, eventIDKey)
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(data[i+len(eventIDKey):], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 || end > 64 {
		return ""
	}
	id := string(rest[1 : 1+end])
	for _, c := range id {
		if (c < '0' || c > '9') && c != '-' {
			return "" // not a Redis entry id
		}
	}
	return id
}

// mayEnd says whether a frame may report the run's end as the decoder
// reads it (a status frame that completes, stops or fails the run, an
// error, or a status row of an error), without decoding the frame. It
// reads the type the frame names first: inside a JSON string every quote
// is escaped, so the first "type" is a key, the record's own in Suna's
// frames (their content and metadata are JSON inside strings); only
// status and error frames, a few per run, are read further. A frame it
// picks only makes the follower ask the run's status; a run whose end it
// misses is found by the status asked when the stream goes quiet.
func mayEnd(data []byte) bool {
	i := bytes.Index(data, typeKey)
	if i < 0 {
		return false
	}
	j := jsonx.SkipSpace(data, i+len(typeKey))
	if j >= len(data) || data[j] != ':' {
		return false
	}
	rest := data[jsonx.SkipSpace(data, j+1):]
	switch {
	case bytes.HasPrefix(rest, []byte(`"error"`)):
		return true
	case !bytes.HasPrefix(rest, []byte(`"status"`)):
		return false
	}
	o := normalize.AsObjectShared(ingest.Repair(bytes.TrimSpace(data)))
	switch normalize.StrField(o, "type") {
	case "error":
		return true
	case "status":
		return endsRun(normalize.StrField(o, "status")) || bytes.Contains(data, []byte("error"))
	}
	return false
}

var typeKey = []byte(`"type"`)

// isPing: a keep-alive frame.
func isPing(data []byte) bool {
	data = bytes.TrimSpace(data)
	if len(data) > 40 || !bytes.Contains(data, []byte("ping")) {
		return false
	}
	o := normalize.AsObjectShared(data)
	return o != nil && len(o) == 1 && normalize.StrField(o, "type") == "ping"
}
