package claudecode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
)

var _ client.RunSummarizer = (*Local)(nil)

// summaryBytes bounds what RunSummary reads of a transcript's end: the
// last run's reply and usage are in its last lines.
const summaryBytes = 2 << 20

// RunSummary implements client.RunSummarizer from the transcript's last
// summaryBytes, decoded as Follow decodes them: the last run's reply (and
// how it ended, where the transcript says). A run longer than that is
// summarized from its end. Its usage is left out: the session's listed
// tokens are its whole count.
func (l *Local) RunSummary(ctx context.Context, sessionID string) (events.RunSummary, error) {
	t, err := l.Session(ctx, sessionID)
	if err != nil {
		return events.RunSummary{}, err
	}
	path := l.transcriptPath(t.ID, t.Cwd)
	f, err := os.Open(path)
	if err != nil {
		return events.RunSummary{}, fmt.Errorf("claude-code: the transcript of %s: %w", t.ID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return events.RunSummary{}, fmt.Errorf("claude-code: %w", err)
	}
	off := max(fi.Size()-summaryBytes, 0)
	data := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(data, off); err != nil && err != io.EOF {
		return events.RunSummary{}, fmt.Errorf("claude-code: read %s: %w", path, err)
	}
	if off > 0 {
		// The first line is cut: start at the next one.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	d := NewDecoder()
	tl := events.NewTimeline()
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // being written
		}
		if line := data[:i]; len(bytes.TrimSpace(line)) > 0 {
			for _, ev := range d.Decode(line) {
				tl.Apply(ev)
			}
		}
		data = data[i+1:]
		if ctx.Err() != nil {
			return events.RunSummary{}, ctx.Err()
		}
	}
	for _, ev := range d.Flush() {
		tl.Apply(ev)
	}
	s := events.LastRun(tl.Items())
	// The board's tokens for a local session are the whole session's
	// (listed, counted in the background), not its last run's.
	s.Usage, s.HasUsage = events.Usage{}, false
	return s, nil
}
