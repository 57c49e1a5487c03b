package registry

import (
	"os"
	"path/filepath"
	"testing"
)

// The directory of a local CLI: its own variable, else the config file's,
// else the default under home; a CLI set off, or whose directory does
// not exist, is no source.
func TestLocalSources(t *testing.T) {
	home := t.TempDir()
	other := t.TempDir()
	inHome := filepath.Join(home, "alt")
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(inHome, 0o700); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		env  map[string]string
		set  map[string]LocalSetting
		want string // "" for no source
	}{
		{"the default", nil, nil, filepath.Join(home, ".claude")},
		{"the variable wins", map[string]string{"CLAUDE_CONFIG_DIR": other}, map[string]LocalSetting{"claude-code": {Dir: "~/alt"}}, other},
		{"the config file's, ~ expanded", nil, map[string]LocalSetting{"claude-code": {Dir: "~/alt"}}, inHome},
		{"off", nil, map[string]LocalSetting{"claude-code": {Off: true}}, ""},
		{"a directory that does not exist", map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(other, "none")}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, s := range Default().LocalSources(env(tc.env), home, tc.set, "") {
				if s.System == "claude-code" {
					got = s.Dir
					b, err := s.Open()
					if err != nil || b.URL() != s.Dir || b.Name() != "claude-code" {
						t.Errorf("open: %v, %v", b, err)
					}
				}
			}
			if got != tc.want {
				t.Errorf("dir %q, want %q", got, tc.want)
			}
		})
	}
}
