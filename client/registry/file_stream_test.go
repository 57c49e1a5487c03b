package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/events"
	"github.com/perch-tui/perch/internal/gentranscript"
	"github.com/perch-tui/perch/internal/ingest"
)

// followAll follows the file's session until its update says Synced and
// returns every update, checking that only the last one is Synced and
// says nothing more is on its way, and that Follow then ends with ctx.
func followAll(t *testing.T, ctx context.Context, b *FileBackend) []client.Update {
	t.Helper()
	ts, err := b.Sessions(ctx)
	if err != nil || len(ts) != 1 {
		t.Fatalf("sessions %v %v", ts, err)
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ups []client.Update
	err = b.Follow(fctx, ts[0].ID, func(u client.Update) {
		ups = append(ups, u)
		if u.Synced {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow returned %v, want context.Canceled after the synced update", err)
	}
	for i, u := range ups {
		last := i == len(ups)-1
		if u.Synced != last || u.Reset {
			t.Errorf("update %d of %d: synced %v, reset %v", i+1, len(ups), u.Synced, u.Reset)
		}
	}
	return ups
}

func eventsOf(ups []client.Update) []events.Event {
	var out []events.Event
	for _, u := range ups {
		out = append(out, u.Events...)
	}
	return out
}

// streamed is the file's events as a full import reads them.
func streamed(t *testing.T, path string, opts ingest.Options) []events.Event {
	t.Helper()
	var want []events.Event
	if _, err := RunWith(context.Background(), path, "", opts, func(ev events.Event) { want = append(want, ev) }); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestFollowFileIsTheImport: following any fixture hands over the events
// a full import of the file reads, in order, ending with the end of
// input, in updates of which only the last says Synced.
func TestFollowFileIsTheImport(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	for _, files := range fixtures(t) {
		for _, f := range files {
			b, err := OpenFile(ctx, f, "", ingest.Options{})
			var ue *ingest.UsageError
			if errors.As(err, &ue) {
				continue // needs a flag: TestOpenFileNeedsAFlag
			}
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			got := eventsOf(followAll(t, ctx, b))
			if want := streamed(t, f, ingest.Options{}); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Follow handed over %d events, the import reads %d (or they differ)", f, len(got), len(want))
			}
			if len(got) == 0 || got[len(got)-1].Kind != events.KindEndOfInput {
				t.Errorf("%s: the last event is not the end of input", f)
			}
			b.Close()
			n++
		}
	}
	if n < 20 {
		t.Errorf("followed only %d fixtures", n)
	}
}

// bigFile writes a few MB of a kind's transcript.
func bigFile(t *testing.T, name string, size int) string {
	t.Helper()
	for _, g := range gentranscript.All() {
		if g.Name == name {
			path := filepath.Join(t.TempDir(), name+"."+g.Shape)
			if err := g.Write(path, size); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatalf("no generator %q", name)
	return ""
}

// TestFollowBigFileInChunks: a big file is handed over as it is read, in
// chunks of bounded events and text, not in one update; a second Follow
// (the UI attaching again) hands the whole session over again.
func TestFollowBigFileInChunks(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{"maria", "claude-code"} {
		path := bigFile(t, name, 4<<20)
		b, err := OpenFile(ctx, path, "", ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := streamed(t, path, ingest.Options{})
		for follow := 1; follow <= 2; follow++ {
			ups := followAll(t, ctx, b)
			if len(ups) < 3 {
				t.Errorf("%s, follow %d: %d updates for a 4 MB file, want it in chunks", name, follow, len(ups))
			}
			for i, u := range ups {
				size := 0
				for j := range u.Events {
					size += u.Events[j].TextBytes()
				}
				if len(u.Events) > chunkEvents || size > 2*chunkBytes {
					t.Errorf("%s: update %d holds %d events, %d bytes of text", name, i, len(u.Events), size)
				}
			}
			if got := eventsOf(ups); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, follow %d: %d events, the import reads %d (or they differ)", name, follow, len(got), len(want))
			}
		}
		b.Close()
	}
}

// TestFollowFileStopsWithCtx: a consumer that lets go mid-file (the UI
// detaching) ends the Follow without the rest of the file being handed
// over.
func TestFollowFileStopsWithCtx(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := OpenFile(ctx, bigFile(t, "maria", 4<<20), "", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fctx, fcancel := context.WithCancel(ctx)
	n := 0
	err = b.Follow(fctx, b.task.ID, func(client.Update) {
		n++
		fcancel()
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("Follow returned %v after %d updates, want context.Canceled after 1", err, n)
	}
}

// TestOpenFileNeedsAFlag: a file the importer refuses only at its end (a
// pynchy recording of two chats, without --chat) fails in OpenFile, before
// any view opens; with --chat it opens.
func TestOpenFileNeedsAFlag(t *testing.T) {
	t.Parallel()
	const path = "../pynchy/testdata/stream_multichat.sse"
	ctx := context.Background()
	_, err := OpenFile(ctx, path, "", ingest.Options{})
	var ue *ingest.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("OpenFile: %v, want a usage error asking for --chat", err)
	}
	b, err := OpenFile(ctx, path, "", ingest.Options{Chat: "tg:100"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, want := eventsOf(followAll(t, ctx, b)), streamed(t, path, ingest.Options{Chat: "tg:100"}); !reflect.DeepEqual(got, want) {
		t.Errorf("--chat: %d events, the import reads %d", len(got), len(want))
	}
}

// TestOpenFileStdin: standard input is kept for every Follow and its copy
// is removed by Close.
func TestOpenFileStdin(t *testing.T) {
	t.Parallel()
	const path = "../claudecode/testdata/session.stream.jsonl"
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx := context.Background()
	b, err := OpenFile(ctx, Stdin, "", ingest.Options{Stdin: in})
	if err != nil {
		t.Fatal(err)
	}
	want := streamed(t, path, ingest.Options{})
	for follow := 1; follow <= 2; follow++ {
		if got := eventsOf(followAll(t, ctx, b)); !reflect.DeepEqual(got, want) {
			t.Errorf("follow %d of stdin: %d events, the file has %d", follow, len(got), len(want))
		}
	}
	copyPath := b.sample.Path
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(copyPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy of stdin is left after Close: %v", err)
	}
}
