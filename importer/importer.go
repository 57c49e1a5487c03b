// Package importer reads a transcript file of any system perch knows into
// a timeline: it recognises the file's system (or takes the one the user
// names) and runs that system's importer.
package importer

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/perch-tui/perch/backend/codex"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/backend/openai"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/ingest"
)

// Kinds lists every importer, in the order they are shown to users.
func Kinds() []ingest.Importer {
	return []ingest.Importer{
		maria.Importer(),
		openai.Importer(),
		codex.Importer(),
	}
}

// Find returns the importer called name.
func Find(name string) (ingest.Importer, bool) {
	for _, k := range Kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return ingest.Importer{}, false
}

// KindList describes every kind and what --from it expects, one per line,
// for usage errors.
func KindList() string {
	var b strings.Builder
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "  %-12s %s\n", k.Name, k.Expects)
	}
	return b.String()
}

// Detect picks the importer that is surest the sampled file is its own.
func Detect(s *ingest.Sample) (ingest.Importer, bool) {
	type scored struct {
		k     ingest.Importer
		score int
	}
	var all []scored
	for _, k := range Kinds() {
		if n := k.Detect(s); n > 0 {
			all = append(all, scored{k, n})
		}
	}
	if len(all) == 0 {
		return ingest.Importer{}, false
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	return all[0].k, true
}

// Result is an imported session.
type Result struct {
	Kind     string
	Timeline *events.Timeline
}

// Run imports the file at path. from names the system ("" detects it).
// Errors a user can fix with a flag are *ingest.UsageError.
func Run(ctx context.Context, path, from string, opts ingest.Options) (*Result, error) {
	s, err := ingest.Sniff(path)
	if err != nil {
		return nil, err
	}
	var k ingest.Importer
	if from != "" {
		var ok bool
		if k, ok = Find(from); !ok {
			return nil, &ingest.UsageError{Msg: fmt.Sprintf("unknown kind %q for --from; the kinds are:\n%s", from, KindList())}
		}
	} else {
		var ok bool
		if k, ok = Detect(s); !ok {
			return nil, &ingest.UsageError{Msg: fmt.Sprintf(
				"%s: not a transcript perch recognises (it looks like %s); name its kind with --from:\n%s",
				path, describe(s), KindList())}
		}
	}
	tl := events.NewTimeline()
	err = k.Import(ctx, s, opts, func(ev events.Event) { tl.Apply(ev) })
	if err != nil {
		return nil, fmt.Errorf("import %s as %s: %w", path, k.Name, err)
	}
	tl.EndOfInput()
	return &Result{Kind: k.Name, Timeline: tl}, nil
}

func describe(s *ingest.Sample) string {
	switch s.Shape {
	case ingest.ShapeUnknown:
		if len(s.Head) == 0 {
			return "an empty file"
		}
		return "neither JSON, JSON lines, an SSE recording nor SQLite"
	case ingest.ShapeSQLite:
		return "a SQLite database of unknown tables"
	}
	return "a " + s.Shape.String() + " file of unknown records"
}
