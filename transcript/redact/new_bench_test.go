package redact

import "testing"

// BenchmarkNew is what a redacting export pays once: reading gitleaks'
// rule file and compiling its patterns.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Options{Home: "/home/someone", User: "someone"}); err != nil {
			b.Fatal(err)
		}
	}
}
