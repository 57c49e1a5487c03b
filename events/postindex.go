package events

// postIndex finds a tool item by the envelope id of its PostToolCall,
// which a Pruned event names. maria's ids are UUIDs: the index keeps them
// as their 16 bytes, so that a long session holds no second copy of every
// result's id text; any other id is kept as is.
type postIndex struct {
	uuids map[[16]byte]*Item
	other map[string]*Item
}

func (p *postIndex) get(id string) *Item {
	if u, ok := parseUUID(id); ok {
		return p.uuids[u]
	}
	return p.other[id]
}

func (p *postIndex) set(id string, it *Item) {
	if u, ok := parseUUID(id); ok {
		if p.uuids == nil {
			p.uuids = make(map[[16]byte]*Item)
		}
		p.uuids[u] = it
		return
	}
	if p.other == nil {
		p.other = make(map[string]*Item)
	}
	p.other[id] = it
}

// dropReleased forgets the items the timeline released.
func (p *postIndex) dropReleased() {
	for k, it := range p.uuids {
		if it.released {
			delete(p.uuids, k)
		}
	}
	for k, it := range p.other {
		if it.released {
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
