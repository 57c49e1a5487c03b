package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/perch-tui/perch/transcript/redact/redacttest"
)

// naive is r with every rule run on whole texts, as gitleaks runs them.
func naive(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Options{Emails: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.rules {
		r.rules[i].windowed, r.rules[i].anchored = false, nil
	}
	return r
}

// sameTexts are texts where the rules' keywords crowd: secrets beside
// prose, logs and code that say key, token, auth and PASS.
func sameTexts() []string {
	var out []string
	noise := []string{
		"ok  \tgithub.com/acme/shop/internal/auth\t8.796s\n=== RUN   TestTokenExpire\n--- PASS: TestTokenExpire (0.81s)\n",
		"2025-06-02T09:58:36Z INFO Writes refreshes first. key=11897 token: abc\n",
		`{"api_key": "x", "monkey_token":"q8Zr4Kx1Vb7Nw2Lm9Pt3Q", "keys.": [1,2]}`,
		"the key to it is a token bucket; see keyring.go and hvs. s.x eyJ eyJhbG\n",
		strings.Repeat("a_very_long_name_without_end_", 4) + "token = \"Zq8r4Kx1Vb7Nw2Lm9Pt3\"\n",
	}
	for _, s := range redacttest.Secrets() {
		for _, n := range noise {
			out = append(out, n+s.Text+" "+n+s.Text, s.Text+n)
		}
	}
	return append(out, noise...)
}

// TestFastSameAsNaive: running a rule only where its matches can start
// finds what running it on the whole text finds.
func TestFastSameAsNaive(t *testing.T) {
	fast, slow := newTest(t, true), naive(t)
	fast.home, fast.user = "", ""
	for _, text := range sameTexts() {
		raw, _ := json.Marshal(map[string]string{"command": text, "description": text})
		for _, s := range []string{text, string(raw)} {
			if got, want := fast.find(s), slow.find(s); !reflect.DeepEqual(got, want) {
				t.Errorf("%q:\nfast  %v\nnaive %v", s, got, want)
			}
		}
	}
}
