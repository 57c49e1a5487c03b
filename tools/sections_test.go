package tools

import (
	"fmt"
	"regexp"
	"testing"
)

// sectionHeads must find what its regexp finds.
func TestSectionHeads(t *testing.T) {
	re := regexp.MustCompile(`(?m)^=== (STDOUT|STDERR) \(([^)]*)\) ===$`)
	for _, text := range []string{
		"", "=== STDOUT (2 lines) ===\na\nb", "x\n=== STDOUT (1 lines) ===\na\n=== STDERR (1 lines) ===\nb\n",
		"=== STDOUT (a\nb) ===\n", "=== STDOUT (x) ===y\n=== STDERR () ===", " === STDOUT (1) ===",
		"=== STDOUT (1)) ===", "=== STDOUT (1 ===\n=== STDERR (2) ===", "=== STDIN (1) ===", "=== STDOUT (1) ===\r\n",
		"=== STDOUT (1) ===\n=== STDOUT (1) ===\n", "=== STD", "a=== STDOUT (1) ===",
	} {
		var want [][4]int
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			want = append(want, [4]int{m[0], m[1], m[2], m[3]})
		}
		if got := sectionHeads(text); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: got %v, want %v", text, got, want)
		}
	}
}
