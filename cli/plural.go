package cli

import "strconv"

// nounCount is n and the noun, singular or plural as n says: "1 held
// message", "2 held messages" (never "message(s)").
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
