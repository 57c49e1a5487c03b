package suna

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
	"github.com/perch-tui/perch/internal/jsonx"
)

var _ client.RunSummarizer = (*Live)(nil)

// maxSummaryRows bounds the rows RunSummary reads of a thread's history.
const maxSummaryRows = 200

// RunSummary implements client.RunSummarizer. How the thread's last run
// ended (completed, failed with its error, stopped) is its agent run's
// status: the thread's runs, newest first. Its last reply and usage are
// in the history's rows, which the messages route answers newest first:
// the answer is read as it comes and closed at the first row older than
// the run, so a long thread costs no more than its last run's rows.
func (l *Live) RunSummary(ctx context.Context, threadID string) (events.RunSummary, error) {
	runs, err := l.runs(ctx, threadID)
	if err != nil {
		return events.RunSummary{}, err
	}
	if len(runs) == 0 {
		return events.RunSummary{}, nil
	}
	r := runs[0]
	rows, err := l.tail(ctx, threadID, r.StartedAt)
	if err != nil {
		return events.RunSummary{}, err
	}
	evs, _, err := decodeAll(ctx, rows)
	if err != nil {
		return events.RunSummary{}, err
	}
	tl := events.NewTimeline()
	for _, ev := range evs {
		tl.Apply(ev)
	}
	s := events.LastRun(tl.Items())
	s.End, s.Reason = runEnd(r)
	return s, nil
}

// runEnd is how a run ended by its status (Suna's agent_runs.status).
func runEnd(r wireRun) (events.RunEnd, string) {
	switch r.Status {
	case "completed":
		return events.RunEndOK, ""
	case "failed", "error":
		return events.RunEndFailed, r.Error
	case "stopped", "cancelled":
		return events.RunEndCancelled, r.Error
	}
	return events.RunEndUnknown, ""
}

// errTailRead stops reading an answer: the rows of the run are in.
var errTailRead = errors.New("enough rows")

// tail reads the thread's history newest first, up to the first row made
// before since (the run's start; all rows up to maxSummaryRows when it
// cannot be read).
func (l *Live) tail(ctx context.Context, threadID, since string) ([]json.RawMessage, error) {
	start, hasStart := parseTime(since)
	var rows []json.RawMessage
	u := l.api.endpoint("threads", threadID, "messages") + "?optimized=false&order=desc"
	err := l.api.getStream(ctx, u, func(body io.Reader) error {
		return eachRow(body, func(raw json.RawMessage) error {
			if hasStart {
				if st, ok := readStamp(raw); ok {
					if at, ok := parseTime(jsonx.String(st.CreatedAt)); ok && at.Before(start.Add(-time.Second)) {
						return errTailRead
					}
				}
			}
			rows = append(rows, raw)
			if len(rows) >= maxSummaryRows {
				return errTailRead
			}
			return nil
		})
	})
	if err != nil && !errors.Is(err, errTailRead) {
		return nil, err
	}
	return rows, nil
}

// eachRow calls fn with each row of a messages answer
// ({"messages": [row…]}), in order, one in memory at a time; fn's error
// ends the read.
func eachRow(body io.Reader, fn func(json.RawMessage) error) error {
	dec := json.NewDecoder(ingest.NewRepairReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("the answer is not the JSON a Suna API sends (is --url the API base?)")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		if kt != "messages" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil // null or not a list: no rows
		}
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if err := fn(raw); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}
