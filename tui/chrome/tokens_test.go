package chrome

import "testing"

// One way to write a token count, in every view; a billion is 3.3G, not
// 3300.0M.
func TestTokens(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 950: "950", 1000: "1k", 9249: "9.2k", 12000: "12k", 12345: "12.3k", 123456: "123k",
		1_234_567: "1.2M", 123_456_789: "123M", 3_300_000_000: "3.3G", 250_000_000_000: "250G",
	} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", n, got, want)
		}
	}
}
