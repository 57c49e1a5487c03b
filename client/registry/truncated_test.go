package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perch-tui/perch/internal/ingest"
)

// A JSON file cut short is called truncated JSON, not a file of an
// unknown kind to name with --from; a whole document of an unknown kind
// (NaN inside included) is still that.
func TestTruncatedJSONIsSaidSo(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text, want string
	}{
		{`[{"type":"user","id":"1","text":"hi"},{"type":"assi`, "truncated JSON"},
		{`{"session": {"messages": [1, 2`, "truncated JSON"},
		{`{"unknown": [1, 2]}`, "not a transcript perch recognises"},
		{`{"unknown": [NaN, 2]}`, "not a transcript perch recognises"},
	} {
		p := filepath.Join(dir, "f.json")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Choose(p, "", ingest.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}
