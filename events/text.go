package events

import (
	"fmt"
	"strconv"
	"strings"
)

// Excerpt returns at most max bytes of data as valid UTF-8 text, with a
// marker when it was cut. Used in notices and error messages.
func Excerpt(data []byte, max int) string {
	total := len(data)
	cut := total > max
	if cut {
		data = data[:max]
	}
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	if cut {
		// Don't end on a partial rune that became U+FFFD.
		s = strings.TrimRight(s, "\uFFFD") + fmt.Sprintf("… (%d bytes)", total)
	}
	return s
}

// maxNoticeText bounds the text of a notice a decoder writes (a system
// prompt, a host message): notices are read, not exported byte for byte.
const maxNoticeText = 4 << 20

// Bound keeps at most maxNoticeText bytes of a notice's text: its head and
// tail, with a marker that says how much was cut. Conversation text and
// tool output are never bounded this way: they are kept whole.
func Bound(s string) string {
	if len(s) <= maxNoticeText {
		return s
	}
	head := strings.ToValidUTF8(s[:maxNoticeText*3/4], "")
	tail := strings.ToValidUTF8(s[len(s)-maxNoticeText/4:], "")
	return head + "\n… [" + strconv.Itoa(len(s)-len(head)-len(tail)) + " bytes not shown] …\n" + tail
}

// ForeignName quotes an event name maria does not send, bounded and with
// every control or invisible character escaped, for a notice.
func ForeignName(name string) string {
	return strconv.QuoteToGraphic(Excerpt([]byte(name), 40))
}

// CostText is a cost in US dollars as a person reads it: cents from a
// dollar up, at most four decimals below, trailing zeros dropped
// ($0.0418, $0.61, $2.40). The JSON forms keep the exact number.
func CostText(usd float64) string {
	if usd >= 1 {
		return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
	}
	s := strings.TrimRight(strconv.FormatFloat(usd, 'f', 4, 64), "0")
	return "$" + strings.TrimSuffix(s, ".")
}
