// Package importer reads a transcript file of any system perch knows into
// a timeline: it recognises the file's system (or takes the one the user
// names) and runs that system's importer.
package importer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perch-tui/perch/backend/anthropic"
	"github.com/perch-tui/perch/backend/attocode"
	"github.com/perch-tui/perch/backend/claudecode"
	"github.com/perch-tui/perch/backend/codex"
	"github.com/perch-tui/perch/backend/maria"
	"github.com/perch-tui/perch/backend/openai"
	"github.com/perch-tui/perch/backend/pynchy"
	"github.com/perch-tui/perch/backend/suna"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/ingest"
)

// Kinds lists every importer, in the order they are shown to users.
func Kinds() []ingest.Importer {
	return []ingest.Importer{
		maria.Importer(),
		suna.Importer(),
		pynchy.Importer(),
		attocode.Importer(),
		anthropic.Importer(),
		claudecode.Importer(),
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
	s, k, err := Choose(path, from)
	if err != nil {
		return nil, err
	}
	tl := events.NewTimeline()
	if err := Stream(ctx, s, k, opts, func(ev events.Event) { tl.Apply(ev) }); err != nil {
		return nil, err
	}
	return &Result{Kind: k.Name, Timeline: tl}, nil
}

// ErrNoSQLite: the file is a SQLite database and this program does not
// link the SQLite driver (the perch program leaves it to perch-ui, see
// attocode.Driver).
var ErrNoSQLite = errors.New("a SQLite database, which perch reads through perch-ui")

// Choose sniffs the file and picks its importer (from names it; "" detects).
// A SQLite database in a program without the driver is ErrNoSQLite.
func Choose(path, from string) (*ingest.Sample, ingest.Importer, error) {
	s, err := ingest.Sniff(path)
	if err != nil {
		return nil, ingest.Importer{}, err
	}
	if s.Shape == ingest.ShapeSQLite && !attocode.CanReadStores() {
		return nil, ingest.Importer{}, fmt.Errorf("%s is %w", path, ErrNoSQLite)
	}
	if from != "" {
		k, ok := Find(from)
		if !ok {
			return nil, k, &ingest.UsageError{Msg: fmt.Sprintf("unknown kind %q for --from; the kinds are:\n%s", from, KindList())}
		}
		return s, k, nil
	}
	k, ok := Detect(s)
	if !ok {
		return nil, k, &ingest.UsageError{Msg: fmt.Sprintf(
			"%s: not a transcript perch recognises (it looks like %s); name its kind with --from:\n%s",
			path, describe(s), KindList())}
	}
	return s, k, nil
}

// Stream runs importer k over the sampled file and emits its events, then
// a KindEndOfInput.
func Stream(ctx context.Context, s *ingest.Sample, k ingest.Importer, opts ingest.Options, emit func(events.Event)) error {
	if err := k.Import(ctx, s, opts, emit); err != nil {
		var ue *ingest.UsageError
		if errors.As(err, &ue) {
			return err
		}
		return fmt.Errorf("import %s as %s: %w", s.Path, k.Name, err)
	}
	emit(events.Event{Kind: events.KindEndOfInput})
	return nil
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
