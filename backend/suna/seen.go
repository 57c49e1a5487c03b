package suna

import (
	"bytes"
	"cmp"
	"slices"
)

// seenID records a frame's _event_id; false when it was seen already (a
// reconnect's replay of what was already read).
func (d *Decoder) seenID(id string) bool {
	if r, ok := parseRedisID([]byte(id)); ok {
		return d.seenRedis(r)
	}
	return !d.events.Seen(id)
}

// redisID is a Redis stream entry id, "<ms>-<seq>". A stream's ids only
// grow, so the ids a decoder has seen are kept as a sorted list of number
// pairs that grows at its end — no string and no map entry per frame —
// and looked up by binary search when one is not past the last.
type redisID struct{ ms, seq uint64 }

func (a redisID) cmp(b redisID) int {
	switch {
	case a.ms != b.ms:
		return cmp.Compare(a.ms, b.ms)
	default:
		return cmp.Compare(a.seq, b.seq)
	}
}

// parseRedisID reads an id written the one way Redis writes it (decimal,
// no sign, no leading zero): then two ids are equal as numbers exactly
// when they are equal as text. Anything else is not taken.
func parseRedisID(b []byte) (redisID, bool) {
	i := bytes.IndexByte(b, '-')
	if i < 0 {
		return redisID{}, false
	}
	ms, ok1 := canonicalUint(b[:i])
	seq, ok2 := canonicalUint(b[i+1:])
	return redisID{ms, seq}, ok1 && ok2
}

func canonicalUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 || (b[0] == '0' && len(b) > 1) {
		return 0, false // 19 digits always fit in a uint64
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func (d *Decoder) seenRedis(id redisID) bool {
	if n := len(d.ids); n == 0 || d.ids[n-1].cmp(id) < 0 {
		d.ids = append(d.ids, id)
		return true
	}
	i, found := slices.BinarySearchFunc(d.ids, id, redisID.cmp)
	if found {
		return false
	}
	d.ids = slices.Insert(d.ids, i, id)
	return true
}
