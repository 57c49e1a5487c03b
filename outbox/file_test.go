package outbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func newStore(t *testing.T) *FileStore {
	t.Helper()
	return OpenFileStore(t.TempDir(), "http://127.0.0.1:8090/v1")
}

const task = "3f2b9c1e-0000-4000-8000-000000000001"

func add(t *testing.T, s Store, task, text string, intent Intent) Message {
	t.Helper()
	var m Message
	_, err := s.Update(task, func(q *Queue) error {
		var err error
		m, err = q.Add(text, intent, false, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func load(t *testing.T, s Store, task string) *Queue {
	t.Helper()
	q, err := s.Load(task)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// edgeTexts are texts that must survive byte for byte.
func edgeTexts() []string {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	return []string{
		big,
		strings.Repeat("né👩‍👩‍👧‍👦", 50000), // multi-byte, ZWJ sequences, ~1.3 MB
		"line\r\nbreaks\n\n\ttabs and trailing space \n",
		"NUL \x00 and controls \x01\x1b[31m\x7f",
		"separators \u2028 \u2029 and BOM \ufeff",
		"RTL \u202eevil\u202c, combining e\u0301, noncharacters \ufffe \uffff, max \U0010ffff",
		`json "quotes" \backslashes\ </script> <>&`,
		" ",
	}
}

func TestFileStoreRoundTrip(t *testing.T) {
	s := newStore(t)
	var ids []string
	for _, text := range edgeTexts() {
		ids = append(ids, add(t, s, task, text, IntentHold).ID)
	}
	// A second store on the same directory (another process) reads them.
	q := load(t, NewFileStore(s.Dir()), task)
	for i, text := range edgeTexts() {
		m, ok := q.Get(ids[i])
		if !ok || m.Text != text {
			t.Fatalf("text %d changed (len %d → %d)", i, len(text), len(m.Text))
		}
	}
	if q.Damaged != 0 || q.Rejected != 0 {
		t.Fatalf("damaged %d rejected %d", q.Damaged, q.Rejected)
	}
	fi, err := os.Stat(s.Path(task))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode: %v %v", fi, err)
	}
	// Compaction keeps them too.
	for i := 0; i < 3*compactMinRecords; i++ {
		if _, err := s.Update(task, func(q *Queue) error { return q.Edit(ids[len(ids)-1], strings.Repeat("x", i+1)) }); err != nil {
			t.Fatal(err)
		}
	}
	q = load(t, s, task)
	for i, text := range edgeTexts()[:len(ids)-1] {
		if m, _ := q.Get(ids[i]); m.Text != text {
			t.Fatalf("text %d changed by compaction", i)
		}
	}
	if m, _ := q.Get(ids[len(ids)-1]); m.Text != strings.Repeat("x", 3*compactMinRecords) {
		t.Fatalf("last edit lost: %q", m.Text)
	}
}

func TestFileStoreDamagedJournal(t *testing.T) {
	s := newStore(t)
	a := add(t, s, task, "first", IntentHold)
	b := add(t, s, task, "second", IntentSend)
	path := s.Path(task)
	good, _ := os.ReadFile(path)

	// Power loss: a half-written last line, and zeros after it.
	half := []byte(`{"op":"add","id":"cccccc","text":"thi`)
	os.WriteFile(path, append(append(slices.Clone(good), half...), 0, 0, 0, 0), 0o600)
	q := load(t, s, task)
	if q.Damaged != 1 || !slices.Equal(texts(q), []string{"first", "second"}) {
		t.Fatalf("half-written: damaged %d, %q", q.Damaged, texts(q))
	}
	// The next change compacts, keeps a copy of the damaged file, and
	// appends cleanly after.
	c := add(t, s, task, "third", IntentHold)
	q = load(t, s, task)
	if q.Damaged != 0 || !slices.Equal(texts(q), []string{"first", "second", "third"}) {
		t.Fatalf("after repair: damaged %d, %q", q.Damaged, texts(q))
	}
	copies, _ := filepath.Glob(path + ".damaged-*")
	if len(copies) != 1 {
		t.Fatalf("damaged copies: %v", copies)
	}

	// Garbage in the middle: skipped, the lines after it still count.
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(data, []byte("\n"))
	var mixed []byte
	mixed = append(mixed, lines[0]...)
	mixed = append(mixed, "\x00\x00garbage {not json\n{\"op\":\"edit\",\"id\":\"zzzzzz\",\"text\":\"x\"}\n[1,2]\n"...)
	for _, l := range lines[1:] {
		mixed = append(mixed, l...)
	}
	os.WriteFile(path, mixed, 0o600)
	q = load(t, s, task)
	if q.Damaged != 2 || q.Rejected != 1 || !slices.Equal(texts(q), []string{"first", "second", "third"}) {
		t.Fatalf("garbage: damaged %d rejected %d %q", q.Damaged, q.Rejected, texts(q))
	}
	for _, id := range []string{a.ID, b.ID, c.ID} {
		if _, ok := q.Get(id); !ok {
			t.Fatalf("lost %s", id)
		}
	}

	// A journal of nothing but garbage still loads.
	os.WriteFile(path, []byte("\xff\xfe\x00garbage\n\n\n"), 0o600)
	if q := load(t, s, task); q.Len() != 0 || q.Damaged != 1 {
		t.Fatalf("garbage only: %d %d", q.Len(), q.Damaged)
	}
}

// A journal without a final newline (its last record whole) gets one
// before the next record.
func TestFileStoreMissingNewline(t *testing.T) {
	s := newStore(t)
	add(t, s, task, "one", IntentHold)
	path := s.Path(task)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.TrimSuffix(data, []byte("\n")), 0o600)
	add(t, s, task, "two", IntentHold)
	q := load(t, s, task)
	if q.Damaged != 0 || !slices.Equal(texts(q), []string{"one", "two"}) {
		t.Fatalf("%d %q", q.Damaged, texts(q))
	}
}

func TestFileStoreCompactionPrunesHistory(t *testing.T) {
	s := newStore(t)
	now := t0
	s.Now = func() time.Time { return now }
	for i := 0; i < 100; i++ {
		_, err := s.Update(task, func(q *Queue) error {
			m, err := q.Add("m", IntentSend, false, now)
			if err != nil {
				return err
			}
			if err := q.MarkSending(m.ID, now); err != nil {
				return err
			}
			return q.MarkSent(m.ID, "", false, false, now)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(48 * time.Hour)
	for i := 0; i < 300; i++ {
		if _, err := s.Update(task, func(q *Queue) error { return q.SetPaused(i%2 == 0) }); err != nil {
			t.Fatal(err)
		}
	}
	q := load(t, s, task)
	if n := len(q.History()); n != historyMin {
		t.Fatalf("history %d, want %d", n, historyMin)
	}
	fi, _ := os.Stat(s.Path(task))
	if fi.Size() > 32<<10 {
		t.Fatalf("journal not compacted: %d bytes", fi.Size())
	}
}

func TestFileStoreConcurrentUpdates(t *testing.T) {
	s := newStore(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := NewFileStore(s.Dir()) // as if another process
			for i := 0; i < 20; i++ {
				if _, err := other.Update(task, func(q *Queue) error {
					_, err := q.Add("hello", IntentHold, false, time.Now())
					return err
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if q := load(t, s, task); q.Len() != 160 || q.Damaged != 0 {
		t.Fatalf("%d messages, %d damaged", q.Len(), q.Damaged)
	}
}

func TestFileStoreTasksAndKeys(t *testing.T) {
	s := newStore(t)
	odd := "../../etc/passwd ñ:x"
	add(t, s, odd, "a", IntentHold)
	add(t, s, task, "b", IntentHold)
	got, err := s.Tasks()
	if err != nil || !slices.Equal(got, []string{odd, task}) && !slices.Equal(got, []string{task, odd}) {
		t.Fatalf("tasks %q %v", got, err)
	}
	if filepath.Dir(s.Path(odd)) != s.Dir() {
		t.Fatalf("task id escaped the store: %s", s.Path(odd))
	}
	if k := DaemonKey("http://127.0.0.1:8090/v1"); !strings.HasPrefix(k, "127.0.0.1_8090_v1-") {
		t.Fatalf("key %q", k)
	}
	if DaemonKey("http://[::1]:8090/v1") == DaemonKey("http://127.0.0.1:8090/v1") ||
		DaemonKey("http://h/a_b/v1") == DaemonKey("http://h/a/b/v1") {
		t.Fatal("keys collide")
	}
	if r := DefaultRoot(func(string) string { return "/x/state" }, "/home/u"); r != "/x/state/perch" {
		t.Fatal(r)
	}
	if r := DefaultRoot(func(string) string { return "relative" }, "/home/u"); r != "/home/u/.local/state/perch" {
		t.Fatal(r)
	}
}

func TestFileStoreWatch(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := s.Watch(ctx, task, 50*time.Millisecond)
	time.Sleep(120 * time.Millisecond)
	other := NewFileStore(s.Dir())
	start := time.Now()
	add(t, other, task, "from the command line", IntentHold)
	select {
	case <-ch:
		if d := time.Since(start); d > time.Second {
			t.Fatalf("noticed after %v", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("change not noticed")
	}
	cancel()
	for range ch { // closed when ctx ends
	}
}

func TestFileStoreMerge(t *testing.T) {
	s := newStore(t)
	a := add(t, s, "3f2b", "typed while the daemon was down", IntentSend)
	add(t, s, task, "already there", IntentHold)
	n, err := s.Merge("3f2b", task)
	if err != nil || n != 1 {
		t.Fatalf("merge: %d %v", n, err)
	}
	q := load(t, s, task)
	if !slices.Equal(texts(q), []string{"already there", "typed while the daemon was down"}) {
		t.Fatalf("%q", texts(q))
	}
	if m, _ := q.Get(a.ID); m.Intent != IntentSend {
		t.Fatalf("intent lost: %+v", m)
	}
	if _, err := os.Stat(s.Path("3f2b")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the provisional journal is still there")
	}
	// Interrupted merge run again: nothing twice.
	if _, err := s.Update("3f2b", func(q *Queue) error { return q.put(&a) }); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Merge("3f2b", task); err != nil || n != 0 {
		t.Fatalf("second merge moved %d (%v)", n, err)
	}
	if q := load(t, s, task); q.Len() != 2 {
		t.Fatalf("%q", texts(q))
	}
}

func TestLoadMissingCreatesNothing(t *testing.T) {
	root := t.TempDir()
	s := OpenFileStore(root, "http://localhost:1/v1")
	if q := load(t, s, task); q.Len() != 0 {
		t.Fatal("not empty")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("Load created %v", entries)
	}
}
