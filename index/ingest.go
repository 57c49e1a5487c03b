package index

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perch-tui/perch/client/registry"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// Source is a session file to index.
type Source struct {
	Path string
	// From names the file's kind ("" detects it).
	From string
	// Parent is the session id a subagent's file ran under ("" none; a
	// Claude Code subagents/agent-*.jsonl is recognised by its path).
	Parent string
}

// FileResult says what indexing one file did.
type FileResult struct {
	Session   string // the session's id
	Read      int64  // source bytes read
	Messages  int    // messages written
	Requests  int    // model requests seen
	Unchanged bool   // nothing new since the last time
	Reset     bool   // the file was replaced or shrank: read again whole
}

// Limits on what one message gives the search: a tool's output past its
// head is rarely what anyone searches for, and it keeps the index small.
const (
	maxText     = 256 << 10
	maxToolText = 16 << 10
	// headSize is how much of a file's start identifies it: a file at the
	// same path whose start differs is another file.
	headSize = 256
	// progressStep is how often progress is told, in source bytes.
	progressStep = 1 << 20
)

type sessionRow struct {
	id      int64
	sid     string
	system  string
	size    int64
	head    []byte
	lines   bool
	deleted bool
}

func (ix *Index) sessionByPath(ctx context.Context, q querier, path string) (*sessionRow, error) {
	r := &sessionRow{}
	var lines, deleted int
	err := q.QueryRowContext(ctx, `SELECT id, sid, system, size, head, lines, deleted FROM sessions WHERE path=?`, path).
		Scan(&r.id, &r.sid, &r.system, &r.size, &r.head, &lines, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.lines, r.deleted = lines == 1, deleted == 1
	return r, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// IndexFile reads what is new in the file at src.Path into the index: the
// whole file the first time, and after that only the lines added since
// (files of JSON lines; a file of another shape is read again whole when
// it changed). A file that shrank or whose start changed is another file:
// its session is read again from the start. progress, when set, is told
// the source bytes read as they are.
func (ix *Index) IndexFile(ctx context.Context, src Source, progress func(int64)) (FileResult, error) {
	w, res, err := ix.prepare(ctx, src, true)
	if err != nil || w == nil {
		return res, err
	}
	w.progress = progress
	return w.result(res, w.run(ctx))
}

// result is what w did, or its error.
func (w *fileWork) result(res FileResult, err error) (FileResult, error) {
	if err != nil {
		return res, fmt.Errorf("index %s: %w", w.path, err)
	}
	res.Session, res.Read, res.Messages, res.Requests = w.sid, w.end-w.start, w.messages, len(w.reqs)
	return res, nil
}

// IndexFiles is IndexFile of each source in turn, two at a time: while
// one file's reading is written to the database, the next file is read
// and decoded (files of up to collectMax new bytes; a bigger one is read
// as IndexFile reads it, its messages written as they come). done is told
// each file's result, in order; progress the source bytes read so far.
func (ix *Index) IndexFiles(ctx context.Context, srcs []Source, done func(Source, FileResult, error), progress func(int64)) {
	type item struct {
		src Source
		w   *fileWork
		res FileResult
		err error
	}
	// A file named twice is read once: the second read would be prepared
	// before the first is written.
	seen := map[string]bool{}
	var once []Source
	for _, s := range srcs {
		abs, err := filepath.Abs(s.Path)
		if err != nil || !seen[abs] {
			seen[abs] = true
			once = append(once, s)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var reading sync.WaitGroup
	defer reading.Wait() // the reading goroutine is done with the database
	defer cancel()
	items := make(chan item, 1)
	reading.Add(1)
	go func() {
		defer reading.Done()
		defer close(items)
		for _, src := range once {
			w, res, err := ix.prepare(ctx, src, false)
			if err == nil && w != nil && w.end-w.start <= collectMax {
				w.collect = true
				err = w.read(ctx)
			}
			select {
			case items <- item{src, w, res, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var base int64
	for it := range items {
		res, err := it.res, it.err
		switch {
		case err != nil && it.w != nil:
			res, err = it.w.result(res, err)
		case err != nil || it.w == nil:
		case it.w.collect:
			res, err = it.w.result(res, it.w.run(ctx))
		default:
			b := base
			it.w.progress = func(n int64) {
				if progress != nil {
					progress(b + n)
				}
			}
			res, err = it.w.result(res, it.w.run(ctx))
		}
		if fi, serr := os.Stat(it.src.Path); serr == nil {
			base += fi.Size()
		}
		if progress != nil {
			progress(base)
		}
		done(it.src, res, err)
		if ctx.Err() != nil {
			return
		}
	}
}

// collectMax is how many new bytes of a file IndexFiles reads into memory
// before it writes them.
const collectMax = 64 << 20

// prepare finds what is new in the file: nil when nothing is. marks: a
// file gone or back is marked so here; IndexFiles, which prepares a file
// while another is written, leaves that to CheckSources, so that its
// reading goroutine never waits for the write lock.
func (ix *Index) prepare(ctx context.Context, src Source, marks bool) (*fileWork, FileResult, error) {
	var res FileResult
	path, err := filepath.Abs(src.Path)
	if err != nil {
		return nil, res, fmt.Errorf("index %s: %w", src.Path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if !marks {
				return nil, res, nil
			}
			return nil, res, ix.markDeleted(ctx, path)
		}
		return nil, res, fmt.Errorf("index: %w", err)
	}
	head, err := readHead(path)
	if err != nil {
		return nil, res, fmt.Errorf("index: %w", err)
	}
	row, err := ix.sessionByPath(ctx, ix.db, path)
	if err != nil {
		return nil, res, fmt.Errorf("index %s: %w", path, err)
	}
	if row != nil && row.deleted && marks {
		// The file is back.
		if _, err := ix.db.ExecContext(ctx, `UPDATE sessions SET deleted=0 WHERE id=?`, row.id); err != nil {
			return nil, res, fmt.Errorf("index %s: %w", path, err)
		}
		row.deleted = false
	}
	if row != nil {
		res.Session = row.sid
		sameFile := bytes.HasPrefix(head, row.head) && fi.Size() >= row.size
		if sameFile && fi.Size() == row.size {
			res.Unchanged = true
			return nil, res, nil
		}
		res.Reset = !sameFile || !row.lines
	}
	kind, lines := "", false
	if row != nil && !res.Reset {
		kind, lines = row.system, row.lines
	} else {
		s, k, err := registry.Choose(path, src.From, ingest.Options{})
		if err != nil {
			return nil, res, fmt.Errorf("index: %w", err)
		}
		s.Close()
		kind, lines = k.Name, s.Shape == ingest.ShapeJSONL
	}
	start := int64(0)
	if row != nil && !res.Reset {
		start = row.size
	}
	end := fi.Size()
	if lines {
		if end, err = lastLineEnd(path, start, fi.Size()); err != nil {
			return nil, res, fmt.Errorf("index: %w", err)
		}
		if end <= start {
			res.Unchanged = true
			return nil, res, nil
		}
	}
	w := &fileWork{ix: ix, src: src, path: path, kind: kind, lines: lines, start: start, end: end,
		head: head, mtime: fi.ModTime(), row: row, reset: res.Reset}
	w.name()
	return w, res, nil
}

// fileWork is one read of one file: a transaction, so that an index
// killed midway is as it was before.
type fileWork struct {
	ix                *Index
	src               Source
	path, kind        string
	lines, reset      bool
	billed            bool // the system reads its lines' billing: events' usage is not counted again
	start, end        int64
	head              []byte
	mtime             time.Time
	progress          func(int64)
	row               *sessionRow
	tx                *sql.Tx
	session           int64
	sid, parent       string
	cwd, title, model string
	first, last       time.Time
	marks             map[string]mark // event ids → their line's time and place
	reqs              map[string]*request
	reqOrder          []string
	runCost           *float64
	sessionCost       *float64  // the latest cost-state's: the session's whole
	cur               time.Time // the time of the latest event seen
	curOff            int64     // the place in the file of the latest event seen
	pending           map[string]*message
	order             []string
	messages          int
	stmts             map[string]*sql.Stmt
	nextID            map[int64]int64 // the next message id of a second
	// collect: read reads the file into chunks and collected, and run
	// writes them; otherwise run reads and writes as it goes.
	collect bool
	// fresh: the session has no messages in the index yet (new, or read
	// again from its start); written are the ids of the messages this
	// read wrote, by key.
	fresh     bool
	written   map[string]int64
	chunks    []chunk
	collected []*message
}

// mark is what the lines say of an event id: the time and the place of
// the first line that holds it (zero time: none said).
type mark struct {
	at  time.Time
	off int64
}

type message struct {
	key, role, tool, text string
	at                    time.Time
	off                   int64 // where in the file its line is (about: see at)
	// Where its text is kept: n bytes at toff in the texts of a chunk,
	// first by its place in the chunks packed with it, then by its id.
	chunk, toff, n int64
}

// read reads and decodes the new bytes into memory (collect), with no
// transaction open: IndexFiles reads the next file while one is written.
func (w *fileWork) read(ctx context.Context) error {
	section, err := w.scan(ctx)
	if section != "" {
		defer os.Remove(section)
	}
	if err != nil {
		return err
	}
	if err := w.decode(ctx, section); err != nil {
		return err
	}
	if !w.collect {
		return nil
	}
	w.collected = latest(w.collected)
	if w.end == w.start {
		w.chunks, err = w.pack(w.collected, nil, 0, 0, 0)
		return err
	}
	name, base := w.path, int64(0)
	if section != "" {
		name, base = section, w.start
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	w.chunks, err = w.pack(w.collected, f, base, w.start, w.end)
	return err
}

// run writes what read collected, or reads and writes as it goes, in
// one transaction.
func (w *fileWork) run(ctx context.Context) error {
	tx, err := w.ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w.tx = tx
	w.stmts = map[string]*sql.Stmt{}
	defer func() {
		for _, s := range w.stmts {
			s.Close()
		}
	}()
	if err := w.openSession(ctx); err != nil {
		return err
	}
	if w.collect {
		if err := w.insertChunks(ctx, w.chunks, w.collected); err != nil {
			return err
		}
		if err := w.write(ctx, w.collected); err != nil {
			return err
		}
	} else if err := w.read(ctx); err != nil {
		return err
	}
	if err := w.finish(ctx); err != nil {
		return err
	}
	return tx.Commit()
}

// name is the session's id and parent as the file's path says them (its
// lines may say better).
func (w *fileWork) name() {
	w.sid = strings.TrimSuffix(filepath.Base(w.path), filepath.Ext(w.path))
	w.parent = w.src.Parent
	if w.parent == "" && filepath.Base(filepath.Dir(w.path)) == "subagents" {
		// Claude Code: <session>/subagents/agent-<id>.jsonl
		w.parent = filepath.Base(filepath.Dir(filepath.Dir(w.path)))
	}
	if w.row != nil && !w.reset {
		w.sid = w.row.sid
	}
}

// openSession finds or makes the session's row, emptied when the file is
// read again from its start.
func (w *fileWork) openSession(ctx context.Context) error {
	if w.row != nil {
		w.session = w.row.id
		if w.reset {
			w.fresh = true
			return w.ix.clearSession(ctx, w.tx, w.session)
		}
		return nil
	}
	w.fresh = true
	return w.tx.QueryRowContext(ctx, `INSERT INTO sessions(path, sid, parent, system, head) VALUES(?,?,?,?,?) RETURNING id`,
		w.path, w.sid, w.parent, w.kind, w.head).Scan(&w.session)
}

// clearSession removes what a session's file gave, keeping its row.
func (ix *Index) clearSession(ctx context.Context, tx *sql.Tx, id int64) error {
	for _, q := range []string{
		`INSERT INTO texts(texts, rowid, text) SELECT 'delete', id, text FROM message_texts WHERE id IN (SELECT id FROM messages WHERE session=?)`,
		`DELETE FROM messages WHERE session=?`,
		`DELETE FROM usage WHERE session=?`,
		`DELETE FROM usage_sums WHERE session=?`,
		`DELETE FROM chunks WHERE session=?`,
		`UPDATE sessions SET size=0, title='', first_at=0, last_at=0, source_cost=NULL WHERE id=?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// scan reads the new bytes once: their lines' usage, ids, times and
// places, and (unless collect, where pack does it with the texts) the
// compressed copy. When the read starts past the file's start, it also
// copies the new bytes to a temporary file for the decoder, whose name
// it returns.
func (w *fileWork) scan(ctx context.Context) (string, error) {
	f, err := os.Open(w.path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var section *os.File
	if w.start > 0 {
		if section, err = os.CreateTemp("", "perch-index-*.jsonl"); err != nil {
			return "", err
		}
		defer section.Close()
	}
	sectionName := ""
	if section != nil {
		sectionName = section.Name()
	}
	var readLine func([]byte) ingest.Billing
	if k, ok := registry.Default().Kind(w.kind); ok {
		readLine = k.Billing
	}
	w.billed = readLine != nil
	w.marks = map[string]mark{}
	w.reqs = map[string]*request{}
	br := bufio.NewReaderSize(io.NewSectionReader(f, w.start, w.end-w.start), 1<<20)
	chunk := &bytes.Buffer{}
	var line []byte
	pos := w.start
	told := pos
	var lastModel string
	flushChunk := func() error {
		if chunk.Len() == 0 {
			return nil
		}
		_, err := w.insertChunk(ctx, packChunk(w.ix.enc, chunk.Bytes(), 0))
		chunk.Reset()
		return err
	}
	for {
		part, err := br.ReadSlice('\n')
		line = append(line[:0], part...)
		for errors.Is(err, bufio.ErrBufferFull) {
			part, err = br.ReadSlice('\n')
			line = append(line, part...)
		}
		if len(line) > 0 {
			lineStart := pos
			pos += int64(len(line))
			if !w.collect {
				chunk.Write(line)
			}
			if section != nil {
				if _, werr := section.Write(line); werr != nil {
					return sectionName, werr
				}
			}
			if readLine != nil {
				b := readLine(bytes.TrimSpace(line))
				w.note(&b, lineStart, &lastModel)
			}
			if chunk.Len() >= copyChunk {
				if err := flushChunk(); err != nil {
					return sectionName, err
				}
			}
			if pos-told >= progressStep {
				told = pos
				if w.progress != nil {
					w.progress(pos - w.start)
				}
				if err := ctx.Err(); err != nil {
					return sectionName, err
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return sectionName, err
		}
	}
	if err := flushChunk(); err != nil {
		return sectionName, err
	}
	if w.progress != nil {
		w.progress(pos - w.start)
	}
	return sectionName, nil
}

// note keeps what one line, at off in the file, told.
func (w *fileWork) note(b *ingest.Billing, off int64, lastModel *string) {
	for _, id := range b.IDs {
		m, ok := w.marks[id]
		if !ok {
			m.off = off
		}
		if m.at.IsZero() {
			m.at = b.At
		}
		w.marks[id] = m
	}
	if !b.At.IsZero() {
		w.span(b.At)
	}
	if b.Session != "" && w.row == nil && w.parent == "" && w.src.Parent == "" {
		w.sid = b.Session
	}
	if b.Cwd != "" && w.cwd == "" {
		w.cwd = b.Cwd
	}
	if b.SessionCost != nil {
		w.sessionCost = b.SessionCost
	}
	if b.RunCost != nil {
		c := *b.RunCost
		if w.runCost != nil {
			c += *w.runCost
		}
		w.runCost = &c
	}
	if b.Model != "" { // the model of the requests that follow
		*lastModel = b.Model
	}
	r := fromBilling(b)
	if r == nil {
		return
	}
	switch {
	case r.key == "": // nothing names it: a request of its own
		r.key = w.kind + ":" + w.path + ":" + strconv.FormatInt(off, 10)
	case b.Request.PerSession:
		r.key = w.kind + ":" + w.sid + ":" + r.key
	}
	if r.model == "" {
		r.model = *lastModel
	}
	if old, ok := w.reqs[r.key]; ok {
		old.merge(r)
		return
	}
	w.reqs[r.key] = r
	w.reqOrder = append(w.reqOrder, r.key)
}

func (w *fileWork) span(t time.Time) {
	if w.first.IsZero() || t.Before(w.first) {
		w.first = t
	}
	if t.After(w.last) {
		w.last = t
	}
}

func (w *fileWork) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	w.stmts[q] = s
	return s, nil
}

func (w *fileWork) insertChunk(ctx context.Context, c chunk) (int64, error) {
	s, err := w.stmt(ctx, `INSERT INTO chunks(session, texts, data) VALUES(?,?,?) RETURNING id`)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.QueryRowContext(ctx, w.session, c.texts, c.data).Scan(&id)
	return id, err
}

// insertChunks writes chunks in order and points the messages packed
// with them (by their place among them) at their rows.
func (w *fileWork) insertChunks(ctx context.Context, chunks []chunk, msgs []*message) error {
	ids := make([]int64, len(chunks))
	for i, c := range chunks {
		var err error
		if ids[i], err = w.insertChunk(ctx, c); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		m.chunk = ids[m.chunk]
	}
	return nil
}

// pack puts msgs' texts, a chunk's worth (textBlock) at a time, before
// the stretch of the file's bytes [start, end) their lines are in, and
// compresses each chunk. f holds those bytes from base on (nil: none,
// the texts alone). Messages without a place took the latest place seen
// (the decoders give events in the file's order); a message whose line
// is outside its chunk's stretch only costs a little more room.
func (w *fileWork) pack(msgs []*message, f *os.File, base, start, end int64) ([]chunk, error) {
	var chunks []chunk
	// buf is a chunk's texts, then its source bytes too.
	var buf []byte
	from := start
	// cut closes the chunk at to: its texts and the bytes up to to, the
	// bytes past copyChunk in chunks of their own.
	cut := func(to int64) error {
		to = min(max(to, from), end)
		for texts := len(buf); texts > 0 || from < to; texts = 0 {
			stop := min(to, from+copyChunk)
			n := int(stop - from)
			buf = slices.Grow(buf, n)[:texts+n]
			if n > 0 {
				if _, err := f.ReadAt(buf[texts:], from-base); err != nil {
					return fmt.Errorf("the copy: %w", err)
				}
			}
			chunks = append(chunks, packChunk(w.ix.enc, buf, texts))
			buf, from = buf[:0], stop
		}
		return nil
	}
	for _, m := range msgs {
		if len(buf) >= textBlock || len(buf) > 0 && m.off-from >= copyChunk {
			if err := cut(m.off); err != nil {
				return nil, err
			}
		}
		m.chunk, m.toff, m.n = int64(len(chunks)), int64(len(buf)), int64(len(m.text))
		buf = append(buf, m.text...)
	}
	if err := cut(end); err != nil {
		return nil, err
	}
	return chunks, nil
}

// decode runs the system's decoder over the new bytes and keeps their
// messages.
func (w *fileWork) decode(ctx context.Context, section string) error {
	path := w.path
	if section != "" {
		path = section
	}
	s, err := ingest.Sniff(path)
	if err != nil {
		return err
	}
	defer s.Close()
	k, ok := registry.Default().Kind(w.kind)
	if !ok {
		return fmt.Errorf("no reader for %q", w.kind)
	}
	w.cur = w.first
	if w.cur.IsZero() {
		w.cur = w.mtime
	}
	w.curOff = w.start
	w.pending = map[string]*message{}
	prefix := strconv.FormatInt(w.start, 36) + "/"
	var werr error
	err = registry.Stream(ctx, s, k, ingest.Options{}, func(ev events.Event) {
		if werr == nil {
			werr = w.event(ctx, prefix, ev)
		}
	})
	if werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	return w.flush(ctx, len(w.order))
}

func (w *fileWork) event(ctx context.Context, prefix string, ev events.Event) error {
	w.at(ev.ID)
	switch ev.Kind {
	case events.KindUserMessage:
		if w.title == "" {
			w.title = firstLine(ev.Text, 120)
		}
		return w.add(ctx, &message{key: prefix + ev.ID, role: "user", text: clip(ev.Text, maxText)})
	case events.KindAssistantMessage:
		text := ev.Text
		if ev.Thinking != "" {
			text = strings.TrimSpace(text + "\n" + ev.Thinking)
		}
		if text != "" {
			if err := w.add(ctx, &message{key: prefix + ev.ID, role: "assistant", text: clip(text, maxText)}); err != nil {
				return err
			}
		}
		for _, c := range ev.ToolCalls {
			w.at(c.ID)
			args := c.ArgsRaw
			if args == "" {
				args = string(c.Args)
			}
			if err := w.add(ctx, &message{key: prefix + c.ID + "/call", role: "tool", tool: c.Name, text: clip(args, maxToolText)}); err != nil {
				return err
			}
		}
		if !w.billed && ev.Usage != nil {
			w.eventUsage(prefix+ev.ID, ev.Usage, ev.Incomplete)
		}
	case events.KindPostToolCall, events.KindToolMessage:
		t := ev.Tool
		if t == nil || t.Result == nil {
			return nil
		}
		w.at(t.Call.ID)
		name := t.Name
		if name == "" {
			name = t.Call.Name
		}
		id := t.Call.ID
		if id == "" {
			id = ev.ID
		}
		text := t.Result.Text
		if text == "" {
			text = t.Result.ErrorText
		}
		return w.add(ctx, &message{key: prefix + id + "/result", role: "tool", tool: name, text: clip(text, maxToolText)})
	case events.KindModelLoaded:
		w.model = ev.Model
	}
	return nil
}

// at moves the current time and place to those of id's line, when
// known: events carry neither, the lines do.
func (w *fileWork) at(id string) {
	m, ok := w.marks[id]
	if !ok || id == "" {
		return
	}
	if !m.at.IsZero() {
		w.cur = m.at
	}
	w.curOff = m.off
}

// eventUsage is a request as a system without per-request records in its
// lines reports it: the decoded reply's usage.
func (w *fileWork) eventUsage(key string, u *events.Usage, incomplete bool) {
	r := &request{key: w.kind + ":" + w.path + ":" + key, at: w.cur, model: w.model, output: u.OutputTokens,
		cacheRead: u.CachedTokens, final: !incomplete}
	if u.HasCacheWrite {
		r.cache5m = u.CacheWriteTokens
	}
	r.input = max(0, u.InputTokens-r.cacheRead-r.cache5m)
	if u.HasCost {
		c := u.CostUSD
		r.cost = &c
	}
	if _, ok := w.reqs[r.key]; !ok {
		w.reqs[r.key] = r
		w.reqOrder = append(w.reqOrder, r.key)
	}
}

// add keeps a message's latest form: a decoder emits a turn again as it
// grows, so a message is written once it has not changed for a while.
func (w *fileWork) add(ctx context.Context, m *message) error {
	if m.text == "" {
		return nil
	}
	m.at, m.off = w.cur, w.curOff
	if old, ok := w.pending[m.key]; ok {
		m.at, m.off = old.at, old.off
	} else {
		w.order = append(w.order, m.key)
	}
	w.pending[m.key] = m
	if len(w.order) > 512 {
		return w.flush(ctx, 256)
	}
	return nil
}

// flush writes the n oldest pending messages: their rows first, then
// their texts. FTS5 writes out what it holds whenever another statement
// begins, so texts written one between each row would make a segment each.
func (w *fileWork) flush(ctx context.Context, n int) error {
	batch := make([]*message, n)
	for i, key := range w.order[:n] {
		batch[i] = w.pending[key]
		delete(w.pending, key)
	}
	w.order = append(w.order[:0], w.order[n:]...)
	if w.collect {
		w.collected = append(w.collected, batch...)
		return nil
	}
	return w.write(ctx, batch)
}

// write writes messages: their rows first, then their texts. Collected
// messages were packed with the new bytes; others are packed here, their
// texts alone.
func (w *fileWork) write(ctx context.Context, batch []*message) error {
	batch = latest(batch)
	if !w.collect {
		chunks, err := w.pack(batch, nil, 0, 0, 0)
		if err != nil {
			return err
		}
		if err := w.insertChunks(ctx, chunks, batch); err != nil {
			return err
		}
	}
	find, err := w.stmt(ctx, `SELECT id FROM messages WHERE session=? AND khash=? AND key=?`)
	if err != nil {
		return err
	}
	// An external-content FTS5 table forgets a row's words when told
	// the text it had.
	del, err := w.stmt(ctx, `INSERT INTO texts(texts, rowid, text) SELECT 'delete', id, text FROM message_texts WHERE id=?`)
	if err != nil {
		return err
	}
	rewrite, err := w.stmt(ctx, `UPDATE messages SET chunk=?, off=?, n=? WHERE id=?`)
	if err != nil {
		return err
	}
	put, err := w.stmt(ctx, `INSERT INTO texts(rowid, text) VALUES(?,?)`)
	if err != nil {
		return err
	}
	if w.written == nil {
		w.written = map[string]int64{}
	}
	ids := make([]int64, len(batch))
	var again []int // batch indexes
	for i, m := range batch {
		if id, ok := w.written[m.key]; ok {
			ids[i] = id
			again = append(again, i) // written earlier in this read: its text is replaced
			continue
		}
		if !w.fresh {
			// A message of an earlier read, when the decoder gave it again.
			err := find.QueryRowContext(ctx, w.session, keyHash(m.key), m.key).Scan(&ids[i])
			if err == nil {
				again = append(again, i)
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if ids[i], err = w.insert(ctx, m); err != nil {
			return err
		}
		w.written[m.key] = ids[i]
	}
	for _, i := range again {
		if _, err := del.ExecContext(ctx, ids[i]); err != nil {
			return err
		}
		m := batch[i]
		if _, err := rewrite.ExecContext(ctx, m.chunk, m.toff, m.n, ids[i]); err != nil {
			return err
		}
	}
	for i, m := range batch {
		if _, err := put.ExecContext(ctx, ids[i], m.text); err != nil {
			return err
		}
		w.messages++
	}
	return nil
}

// keyHash is a message key's hash as messages.khash keeps it: 32 bits,
// four bytes in a row and in the index, is plenty to tell apart the keys
// of one session (the key itself settles a collision).
func keyHash(key string) int64 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int64(int32(h.Sum32())) // signed: SQLite keeps it in four bytes
}

// latest keeps one message of each key, its last form, where its first
// was: the messages collected from a whole file may hold a turn the
// decoder gave again after it was flushed.
func latest(batch []*message) []*message {
	at := make(map[string]int, len(batch))
	out := batch[:0:0]
	for _, m := range batch {
		if i, ok := at[m.key]; ok {
			out[i] = m
			continue
		}
		at[m.key] = len(out)
		out = append(out, m)
	}
	return out
}

// A message's id is its time: its second, shifted left by idShift, plus
// its place among the messages of that second. The search table's rows
// are then in time order, and FTS5 reads a word's newest hits first
// (ORDER BY rowid DESC) and stops at the limit, however common the word.
// Each session first tries ids of its own within the second (by its row
// id), so that finding a free one seldom needs a query.
const idShift = 20

// insert writes m's row under a free id of its second.
func (w *fileWork) insert(ctx context.Context, m *message) (int64, error) {
	ins, err := w.stmt(ctx, `INSERT OR IGNORE INTO messages(id, session, key, khash, role, tool, at, chunk, off, n) VALUES(?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return 0, err
	}
	sec := max(m.at.Unix(), 0)
	if w.nextID == nil {
		w.nextID = map[int64]int64{}
	}
	id, ok := w.nextID[sec]
	if !ok {
		id = sec<<idShift | (w.session&1023)<<10
	}
	for try := 0; ; try++ {
		if id >= (sec+1)<<idShift || try == 2 {
			return 0, fmt.Errorf("no free message id in the second %d", sec)
		}
		res, err := ins.ExecContext(ctx, id, w.session, m.key, keyHash(m.key), m.role, m.tool, m.at.UnixMilli(), m.chunk, m.toff, m.n)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, err
		} else if n == 1 {
			w.nextID[sec] = id + 1
			return id, nil
		}
		// Taken: the next after the second's last.
		q, err := w.stmt(ctx, `SELECT coalesce(max(id) + 1, ?) FROM messages WHERE id >= ? AND id < ?`)
		if err != nil {
			return 0, err
		}
		if err := q.QueryRowContext(ctx, sec<<idShift, sec<<idShift, (sec+1)<<idShift).Scan(&id); err != nil {
			return 0, err
		}
	}
}

// finish writes the requests and the session's row.
func (w *fileWork) finish(ctx context.Context) error {
	s, err := w.stmt(ctx, `INSERT INTO usage(key, session, at, model, input, output, cache_read, cache_5m, cache_1h, output_final, source_cost)
		VALUES(?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(key) DO UPDATE SET
			input=max(input, excluded.input), output=max(output, excluded.output),
			cache_read=max(cache_read, excluded.cache_read), cache_5m=max(cache_5m, excluded.cache_5m),
			cache_1h=max(cache_1h, excluded.cache_1h), output_final=max(output_final, excluded.output_final),
			at=min(at, excluded.at), model=CASE WHEN model='' THEN excluded.model ELSE model END,
			source_cost=coalesce(source_cost, excluded.source_cost)
		RETURNING session`)
	if err != nil {
		return err
	}
	// The sessions whose requests changed: this one, and those that had a
	// copy of a request first.
	touched := map[int64]bool{w.session: true}
	for _, k := range w.reqOrder {
		r := w.reqs[k]
		at := r.at
		if at.IsZero() {
			at = w.cur
		}
		var cost any
		if r.cost != nil {
			cost = *r.cost
		}
		var owner int64
		if err := s.QueryRowContext(ctx, r.key, w.session, at.UnixMilli(), r.model, r.input, r.output, r.cacheRead,
			r.cache5m, r.cache1h, b2i(r.final), cost).Scan(&owner); err != nil {
			return err
		}
		touched[owner] = true
	}
	for id := range touched {
		if err := sumUsage(ctx, w.tx, id); err != nil {
			return err
		}
	}
	var first, last any
	if !w.first.IsZero() {
		first, last = w.first.UnixMilli(), w.last.UnixMilli()
	} else {
		first, last = w.mtime.UnixMilli(), w.mtime.UnixMilli()
	}
	// The source's own figure: Claude Code's running session total (the
	// latest replaces), else the runs' results (each adds).
	var cost, whole any
	if w.runCost != nil {
		cost = *w.runCost
	}
	if w.sessionCost != nil {
		cost, whole = *w.sessionCost, 1
	}
	_, err = w.tx.ExecContext(ctx, `UPDATE sessions SET sid=?, parent=?, system=?, size=?, lines=?, deleted=0,
		project=CASE WHEN project='' THEN ? ELSE project END,
		title=CASE WHEN title='' THEN ? ELSE title END,
		head=CASE WHEN ?=0 THEN ? ELSE head END,
		first_at=CASE WHEN first_at=0 OR first_at>? THEN ? ELSE first_at END,
		last_at=max(last_at, ?),
		source_cost=CASE WHEN ? IS NULL THEN source_cost WHEN ? IS NOT NULL THEN ? ELSE coalesce(source_cost, 0)+? END
		WHERE id=?`,
		w.sid, w.parent, w.kind, w.end, b2i(w.lines), w.cwd, w.title, w.start, w.head, first, first, last, cost, whole, cost, cost, w.session)
	return err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, n)
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, headSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// lastLineEnd is the offset just past the last newline in [start, size):
// a line still being written is read next time.
func lastLineEnd(path string, start, size int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for end := size; end > start; {
		n := min(int64(len(buf)), end-start)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return start, nil
}

// markDeleted marks the session read from path as gone from disk; its
// copy in the index stays.
func (ix *Index) markDeleted(ctx context.Context, path string) error {
	_, err := ix.db.ExecContext(ctx, `UPDATE sessions SET deleted=1 WHERE path=?`, path)
	return err
}
