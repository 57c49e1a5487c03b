package suna

import (
	"bytes"
	"cmp"
	"encoding/binary"
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

// redisID is a Redis stream entry id, "<ms>-<seq>".
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
	// A millisecond count is a time; one past 2^63 (no clock's) is left
	// as text, so that the step between two always fits appendDelta.
	return redisID{ms, seq}, ok1 && ok2 && ms < 1<<63
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

func (d *Decoder) seenRedis(id redisID) bool { return d.ids.add(id) }

// redisIDs is the set of Redis entry ids a decoder has seen. A replay may
// repeat any of them, however old, so none can be forgotten; but a
// stream's ids only grow, so they are kept in order, in blocks of up to
// blockLen ids, each id after a block's first written as its difference
// from the one before (a byte or two, not sixteen). An id past the
// last is appended to the last block; any other is looked up, and if new
// inserted, by decoding its one block.
type redisIDs struct {
	blocks  []idBlock
	last    redisID   // the greatest id in the set
	n       int       // how many ids
	scratch []redisID // a decoded block, reused
	// decoded is 1 + the index of the block scratch holds, 0 for none: a
	// replay looks up its ids in order, block after block.
	decoded int
}

// blockLen is how many ids a block holds at most: small enough that
// decoding one for a look-up is cheap, large enough that a block's own
// fields cost little per id.
const blockLen = 256

type idBlock struct {
	first redisID
	n     int    // ids in the block, first included
	enc   []byte // the ids after first, each as appendDelta wrote it
}

// add adds id and reports whether it is new.
func (s *redisIDs) add(id redisID) bool {
	if len(s.blocks) == 0 || s.last.cmp(id) < 0 {
		s.push(id)
		return true
	}
	// The block id belongs in: the last one starting at or before it, or
	// the first.
	i, found := slices.BinarySearchFunc(s.blocks, id, func(b idBlock, id redisID) int { return b.first.cmp(id) })
	if found {
		return false
	}
	if i > 0 {
		i--
	}
	if s.decoded != i+1 {
		s.scratch, s.decoded = s.blocks[i].decode(s.scratch[:0]), i+1
	}
	j, found := slices.BinarySearchFunc(s.scratch, id, redisID.cmp)
	if found {
		return false
	}
	ids := slices.Insert(s.scratch, j, id)
	s.scratch, s.decoded = ids, 0 // the blocks change
	s.n++
	if len(ids) <= blockLen {
		s.blocks[i] = newBlock(ids)
		return true
	}
	// Split a full block in halves, so that ids inserted in one place
	// (descending, say) still fill blocks at least half.
	h := len(ids) / 2
	s.blocks = slices.Insert(s.blocks, i+1, newBlock(ids[h:]))
	s.blocks[i] = newBlock(ids[:h])
	return true
}

// push adds id, greater than every id in the set.
func (s *redisIDs) push(id redisID) {
	s.n++
	n := len(s.blocks)
	if n == 0 || s.blocks[n-1].n >= blockLen {
		s.blocks = append(s.blocks, idBlock{first: id, n: 1})
		s.last = id
		return
	}
	if s.decoded == n {
		s.decoded = 0 // the last block changes
	}
	b := &s.blocks[n-1]
	b.enc = appendDelta(b.enc, s.last, id)
	b.n++
	if b.n == blockLen {
		b.enc = bytes.Clone(b.enc) // full: give back the room append left
	}
	s.last = id
}

// len is how many ids the set holds.
func (s *redisIDs) len() int { return s.n }

// newBlock encodes ids, ascending, as one block.
func newBlock(ids []redisID) idBlock {
	var enc []byte
	for k := 1; k < len(ids); k++ {
		enc = appendDelta(enc, ids[k-1], ids[k])
	}
	return idBlock{first: ids[0], n: len(ids), enc: bytes.Clone(enc)}
}

// decode appends the block's ids to dst.
func (b *idBlock) decode(dst []redisID) []redisID {
	prev := b.first
	dst = append(dst, prev)
	for enc := b.enc; len(enc) > 0; {
		v, k := binary.Uvarint(enc)
		enc = enc[k:]
		id := redisID{ms: prev.ms + v>>1}
		if v&1 != 0 {
			id.seq, k = binary.Uvarint(enc)
			enc = enc[k:]
			if id.ms == prev.ms {
				id.seq += prev.seq
			}
		}
		prev = id
		dst = append(dst, prev)
	}
	return dst
}

// appendDelta writes id, greater than prev, as the step from prev: the
// growth of its milliseconds, shifted left by one, with the low bit set
// when a sequence number follows — none for 0, the usual case, so that an
// id a few ms after the last takes one byte. With the same milliseconds
// the sequence is written as the growth from prev's.
func appendDelta(enc []byte, prev, id redisID) []byte {
	dms, seq := id.ms-prev.ms, id.seq
	if dms == 0 {
		seq -= prev.seq
	}
	if seq == 0 {
		return binary.AppendUvarint(enc, dms<<1)
	}
	enc = binary.AppendUvarint(enc, dms<<1|1)
	return binary.AppendUvarint(enc, seq)
}
