package index

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perch-tui/perch/events"
)

// LiveSession is a session of a live source (a daemon or server perch
// follows), whose events the caller read.
type LiveSession struct {
	URL, ID string
	System  string
	Title   string
	Project string
	// Created and Updated are the session's times as its source says
	// them (zero: unknown). Live events carry no time: the messages take
	// the session's start, and its last update is its end.
	Created, Updated time.Time
}

// livePrefix starts the path of a live session's row: it names no file.
const livePrefix = "live:"

// Path is the session's key among the index's sources.
func (s LiveSession) Path() string { return livePrefix + s.URL + "#" + s.ID }

func isLive(path string) bool { return strings.HasPrefix(path, livePrefix) }

// IndexEvents puts a live session into the index as its events say it,
// replacing what an earlier read of it gave. A live session has no copy:
// it is opened live.
func (ix *Index) IndexEvents(ctx context.Context, s LiveSession, evs []events.Event) (FileResult, error) {
	path := s.Path()
	row, err := ix.sessionByPath(ctx, ix.db, path)
	if err != nil {
		return FileResult{}, fmt.Errorf("index %s: %w", path, err)
	}
	at := s.Created
	if at.IsZero() {
		at = time.Now()
	}
	w := &fileWork{ix: ix, src: Source{Path: path}, path: path, kind: s.System, row: row, reset: row != nil,
		mtime: at, cur: at, collect: true, pending: map[string]*message{}}
	w.span(at)
	if !s.Updated.IsZero() {
		w.span(s.Updated)
	}
	w.sid = s.ID
	w.cwd, w.title = s.Project, firstLine(s.Title, 120)
	w.reqs = map[string]*request{}
	for _, ev := range evs {
		if err := w.event(ctx, "0/", ev); err != nil {
			return FileResult{}, err
		}
	}
	if err := w.flush(ctx, len(w.order)); err != nil {
		return FileResult{}, err
	}
	w.collected = latest(w.collected)
	if w.chunks, err = w.pack(w.collected, nil, 0, 0, 0); err != nil {
		return FileResult{}, err
	}
	res, err := w.result(FileResult{Reset: row != nil}, w.run(ctx))
	res.Read = 0
	return res, err
}

// Live says whether s is a live source's session, and which.
func (s Session) Live() (url, id string, ok bool) {
	rest, ok := strings.CutPrefix(s.Path, livePrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '#')
	if i < 0 {
		return rest, s.SID, true
	}
	return rest[:i], rest[i+1:], true
}
