package outbox

import (
	"crypto/rand"
	"fmt"
	"sort"
	"strings"
)

// idAlphabet is base32 (RFC 4648) in lower case: no 0/1/8/9, so an id
// never reads like a task id's hex.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// IDLen is the length of a local id: 32^6 ≈ 10^9 ids per task.
const IDLen = 6

// NewID returns a fresh local id that no message of q (pending or sent)
// has.
func (q *Queue) NewID() string {
	for {
		var b [IDLen]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand never fails on supported systems
		}
		for i := range b {
			b[i] = idAlphabet[b[i]%32]
		}
		id := string(b[:])
		if _, taken := q.Get(id); !taken {
			return id
		}
	}
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Find resolves a pending message by its id or a unique prefix of it (case
// insensitive), as task ids are resolved. Errors wrap ErrNoMessage or
// ErrAmbiguousID.
func (q *Queue) Find(idOrPrefix string) (Message, error) {
	p := strings.ToLower(strings.TrimSpace(idOrPrefix))
	if p == "" {
		return Message{}, fmt.Errorf("empty message id: %w", ErrNoMessage)
	}
	var hits []Message
	for _, m := range q.pending {
		if m.ID == p {
			return m, nil
		}
		if strings.HasPrefix(m.ID, p) {
			hits = append(hits, m)
		}
	}
	switch len(hits) {
	case 0:
		return Message{}, fmt.Errorf("%q: %w", idOrPrefix, ErrNoMessage)
	case 1:
		return hits[0], nil
	}
	ids := make([]string, len(hits))
	for i, m := range hits {
		ids[i] = m.ID
	}
	sort.Strings(ids)
	return Message{}, fmt.Errorf("%q matches %s; give more of the id: %w", idOrPrefix, strings.Join(ids, ", "), ErrAmbiguousID)
}
