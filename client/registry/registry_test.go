package registry

import (
	"strings"
	"testing"

	"github.com/perch-tui/perch/client"
)

// TestDefaultTable: every system reads its files, under its own name, and
// the live ones are those --backend names (client.Maria, …).
func TestDefaultTable(t *testing.T) {
	r := Default()
	if got := strings.Join(r.Names(), ","); got != "maria,suna,pynchy,attocode,anthropic,claude-code,openai,codex" {
		t.Errorf("names %s", got)
	}
	want := strings.Join([]string{client.Maria, client.Suna, client.Pynchy}, ",")
	if got := strings.Join(r.LiveNames(), ","); got != want {
		t.Errorf("live names %s, want %s", got, want)
	}
	for _, s := range r.Systems {
		if s.Files.Name != s.Name || s.Files.Import == nil || s.Files.Detect == nil {
			t.Errorf("%s: its importer is %q (import set: %v)", s.Name, s.Files.Name, s.Files.Import != nil)
		}
		if (s.Probe == nil) != (s.Open == nil) {
			t.Errorf("%s: a live system needs both Probe and Open", s.Name)
		}
	}
	if len(r.Kinds()) != len(r.Systems) {
		t.Errorf("%d kinds for %d systems", len(r.Kinds()), len(r.Systems))
	}
	if _, err := r.Lookup("attocode"); err == nil {
		t.Error("attocode is not a live backend, yet Lookup found it")
	}
}
