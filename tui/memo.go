package tui

import (
	"strconv"
	"strings"
)

// memo keeps the last result of an expensive pure rendering (lipgloss
// styling, the textarea's view) together with a key of everything it
// depends on. View runs after every message; most messages change none of
// the chrome, so most frames reuse it.
type memo struct {
	key string
	val string
	ok  bool
}

func (c *memo) get(key string, f func() string) string {
	if c.ok && c.key == key {
		return c.val
	}
	c.key, c.val, c.ok = key, f(), true
	return c.val
}

// keyb builds memo keys without fmt.
type keyb struct{ b strings.Builder }

func (k *keyb) s(s string) *keyb { k.b.WriteString(s); k.b.WriteByte(0); return k }
func (k *keyb) i(n int) *keyb    { k.b.WriteString(strconv.Itoa(n)); k.b.WriteByte(0); return k }
func (k *keyb) i64(n int64) *keyb {
	k.b.WriteString(strconv.FormatInt(n, 10))
	k.b.WriteByte(0)
	return k
}
func (k *keyb) t(v bool) *keyb {
	if v {
		k.b.WriteByte('1')
	} else {
		k.b.WriteByte('0')
	}
	return k
}
func (k *keyb) String() string { return k.b.String() }
