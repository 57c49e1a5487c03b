package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/ingest"
)

// Reading a transcript file of any system: recognise the file's system
// (or take the one the user names) and run that system's importer.

// Kinds lists the importers of the systems whose files perch reads, in
// the order they are shown to users.
func (r *Registry) Kinds() []ingest.Importer {
	var out []ingest.Importer
	for _, s := range r.Systems {
		if s.Files.Import != nil {
			out = append(out, s.Files)
		}
	}
	return out
}

// Kind returns the importer called name.
func (r *Registry) Kind(name string) (ingest.Importer, bool) {
	for _, k := range r.Kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return ingest.Importer{}, false
}

// KindList describes every kind and what --from it expects, one per line,
// for usage errors.
func (r *Registry) KindList() string {
	var b strings.Builder
	for _, k := range r.Kinds() {
		fmt.Fprintf(&b, "  %-12s %s\n", k.Name, k.Expects)
	}
	return b.String()
}

// Detect picks the importer that is surest the sampled file is its own.
func (r *Registry) Detect(s *ingest.Sample) (ingest.Importer, bool) {
	type scored struct {
		k     ingest.Importer
		score int
	}
	var all []scored
	for _, k := range r.Kinds() {
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

// Detect is Default().Detect.
func Detect(s *ingest.Sample) (ingest.Importer, bool) { return Default().Detect(s) }

// Result is an imported session.
type Result struct {
	Kind     string
	Timeline *events.Timeline
}

// Run imports the file at path. from names the system ("" detects it).
// Path "-" is standard input (opts.Stdin). Errors a user can fix with a
// flag are *ingest.UsageError.
func (r *Registry) Run(ctx context.Context, path, from string, opts ingest.Options) (*Result, error) {
	return r.RunInto(ctx, events.NewTimeline(), path, from, opts)
}

// RunInto is Run applying the file's events to tl, a timeline the caller
// set up (one that keeps its long texts in a BodyStore, for a big file).
func (r *Registry) RunInto(ctx context.Context, tl *events.Timeline, path, from string, opts ingest.Options) (*Result, error) {
	kind, err := r.RunWith(ctx, path, from, opts, func(ev events.Event) { tl.Apply(ev) })
	if err != nil {
		return nil, err
	}
	return &Result{Kind: kind, Timeline: tl}, nil
}

// RunWith imports the file at path as Run does, handing each event to
// emit as it is read (the last is KindEndOfInput), and returns the kind.
func (r *Registry) RunWith(ctx context.Context, path, from string, opts ingest.Options, emit func(events.Event)) (string, error) {
	s, k, err := r.Choose(path, from, opts)
	if err != nil {
		return "", err
	}
	defer s.Close()
	if err := Stream(ctx, s, k, opts, emit); err != nil {
		return "", err
	}
	return k.Name, nil
}

// Run is Default().Run.
func Run(ctx context.Context, path, from string, opts ingest.Options) (*Result, error) {
	return Default().Run(ctx, path, from, opts)
}

// RunWith is Default().RunWith.
func RunWith(ctx context.Context, path, from string, opts ingest.Options, emit func(events.Event)) (string, error) {
	return Default().RunWith(ctx, path, from, opts, emit)
}

// RunInto is Default().RunInto.
func RunInto(ctx context.Context, tl *events.Timeline, path, from string, opts ingest.Options) (*Result, error) {
	return Default().RunInto(ctx, tl, path, from, opts)
}

// Stdin is the path that names standard input.
const Stdin = "-"

// Choose sniffs the file and picks its importer (from names it; ""
// detects it). Path "-" reads opts.Stdin; it, and any other input that is
// not a regular file (a pipe, /dev/stdin), is read whole into a temporary
// file first (ingest.SniffStream), which the sample's Close removes.
func (r *Registry) Choose(path, from string, opts ingest.Options) (*ingest.Sample, ingest.Importer, error) {
	if from != "" {
		if _, ok := r.Kind(from); !ok {
			return nil, ingest.Importer{}, &ingest.UsageError{Msg: fmt.Sprintf("unknown kind %q for --from; the kinds are:\n%s", from, r.KindList())}
		}
	}
	var s *ingest.Sample
	var err error
	if path == Stdin {
		if opts.Stdin == nil {
			return nil, ingest.Importer{}, &ingest.UsageError{Msg: "no standard input to read for \"-\""}
		}
		s, err = ingest.SniffStream("stdin", opts.Stdin)
	} else {
		s, err = ingest.Sniff(path)
	}
	if err != nil {
		return nil, ingest.Importer{}, err
	}
	if from != "" {
		k, _ := r.Kind(from)
		return s, k, nil
	}
	k, ok := r.Detect(s)
	if !ok && truncatedJSON(s) {
		s.Close()
		return nil, k, &ingest.UsageError{Msg: fmt.Sprintf(
			"%s: truncated JSON: the document ends before it closes (cut short while it was written or copied?)", s.Name)}
	}
	if !ok {
		s.Close()
		return nil, k, &ingest.UsageError{Msg: fmt.Sprintf(
			"%s: not a transcript perch recognises (it looks like %s); name its kind with --from:\n%s",
			s.Name, describe(s), r.KindList())}
	}
	return s, k, nil
}

// Choose is Default().Choose.
func Choose(path, from string, opts ingest.Options) (*ingest.Sample, ingest.Importer, error) {
	return Default().Choose(path, from, opts)
}

// Stream runs importer k over the sampled file and emits its events, then
// a KindEndOfInput.
func Stream(ctx context.Context, s *ingest.Sample, k ingest.Importer, opts ingest.Options, emit func(events.Event)) error {
	if err := k.Import(ctx, s, opts, emit); err != nil {
		var ue *ingest.UsageError
		if errors.As(err, &ue) {
			return err
		}
		return fmt.Errorf("import %s as %s: %w", s.Name, k.Name, err)
	}
	emit(events.Event{Kind: events.KindEndOfInput})
	return nil
}

// truncatedJSON: the file is one JSON document, read whole (it is
// smaller than the sniffed head), that does not close: it was cut short,
// it is not of an unknown kind.
func truncatedJSON(s *ingest.Sample) bool {
	if s.Shape != ingest.ShapeJSON || len(s.Head) >= ingest.HeadSize || json.Valid(s.Head) {
		return false
	}
	// Not valid, and not only for a NaN or a Python literal inside: its
	// last value is open.
	b := bytes.TrimSpace(s.Head)
	return len(b) > 0 && b[len(b)-1] != '}' && b[len(b)-1] != ']'
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
