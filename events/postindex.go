package events

// postIndex finds a tool item by the envelope id of its PostToolCall,
// which a Pruned event names. maria's ids are UUIDs: the index keeps them
// as their 16 bytes, so that a long session holds no second copy of every
// result's id text; any other id is kept as is.
type postIndex struct {
	uuids map[[16]byte]int32
	other map[string]int32
}

// get is the place in the session (Item.pos) of the tool item whose
// PostToolCall had the envelope id.
func (p *postIndex) get(id string) (int, bool) {
	var pos int32
	var ok bool
	if u, isUUID := parseUUID(id); isUUID {
		pos, ok = p.uuids[u]
	} else {
		pos, ok = p.other[id]
	}
	return int(pos), ok
}

func (p *postIndex) set(id string, pos int32) {
	if u, ok := parseUUID(id); ok {
		if p.uuids == nil {
			p.uuids = make(map[[16]byte]int32)
		}
		p.uuids[u] = pos
		return
	}
	if p.other == nil {
		p.other = make(map[string]int32)
	}
	p.other[id] = pos
}

// dropReleased forgets the items before the place released.
func (p *postIndex) dropReleased(released int) {
	for k, pos := range p.uuids {
		if int(pos) < released {
			delete(p.uuids, k)
		}
	}
	for k, pos := range p.other {
		if int(pos) < released {
			delete(p.other, k)
		}
	}
}

// parseUUID reads a UUID in its canonical text (8-4-4-4-12 lower-case hex
// digits), the only spelling whose bytes give the same text back.
func parseUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < len(s); {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := hexDigit(s[i])
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		i, j = i+2, j+1
	}
	return u, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
