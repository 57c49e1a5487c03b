// Package ingest reads agent transcripts from files: it recognises how a
// file is laid out (an SSE recording, JSON lines, one JSON document, a
// SQLite database), samples its first records so that each system's
// importer can say whether the file is its own, and streams the records to
// that importer. It knows no system's vocabulary and produces no events.
package ingest

import (
	"bytes"
	"io"
)

// Repair makes Python-flavoured JSON readable by encoding/json: the bare
// tokens NaN, Infinity and -Infinity (which Python's json.dumps writes for
// non-finite floats) become null outside strings. Everything else is left
// as is; encoding/json already turns invalid UTF-8 and unpaired surrogate
// escapes into U+FFFD. Input without those tokens is returned unchanged and
// uncopied.
func Repair(raw []byte) []byte {
	// Most input holds neither word; where it does, it is mostly in text.
	if !bytes.Contains(raw, nonFinite[0]) && !bytes.Contains(raw, nonFinite[1]) || !wordOutsideStrings(raw) {
		return raw
	}
	var r repairer
	out := r.feed(make([]byte, 0, len(raw)), raw)
	out = r.flush(out)
	if !r.changed {
		return raw // the words were in text
	}
	return out
}

// wordOutsideStrings reports whether NaN or Infinity stands outside the
// strings of raw: only there can a token be.
func wordOutsideStrings(raw []byte) bool {
	for i := 0; i < len(raw); {
		q := bytes.IndexByte(raw[i:], '"')
		out := raw[i:]
		if q >= 0 {
			out = out[:q]
		}
		if bytes.Contains(out, nonFinite[0]) || bytes.Contains(out, nonFinite[1]) {
			return true
		}
		if q < 0 {
			return false
		}
		end := closingQuote(raw, i+q+1)
		if end < 0 {
			return false
		}
		i = end + 1
	}
	return false
}

// NewRepairReader is Repair for a stream of any size: it rewrites the same
// tokens on the fly, with constant memory.
func NewRepairReader(r io.Reader) io.Reader {
	return &repairReader{src: r, in: make([]byte, 256<<10)}
}

type repairReader struct {
	src  io.Reader
	in   []byte
	buf  []byte // what feed wrote (reused)
	out  []byte // the part of buf not read yet
	rp   repairer
	err  error
	done bool
}

func (r *repairReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.done {
			return 0, r.err
		}
		n, err := r.src.Read(r.in)
		r.buf = r.rp.feed(r.buf[:0], r.in[:n])
		if err != nil {
			r.buf = r.rp.flush(r.buf)
			r.done, r.err = true, err
		}
		r.out = r.buf
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// repairer is the state machine behind Repair: it tracks whether it is in
// a string (and after a backslash), and holds back a possible token prefix
// that a chunk boundary split.
type repairer struct {
	inString bool
	escaped  bool
	pending  []byte // a prefix of NaN / Infinity / -Infinity seen so far
	changed  bool   // a token was replaced
}

var nonFinite = [][]byte{[]byte("NaN"), []byte("Infinity"), []byte("-Infinity")}

func (r *repairer) feed(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if len(r.pending) > 0 {
			r.pending = append(r.pending, in[i])
			switch matchToken(r.pending) {
			case tokenFull:
				out = append(out, "null"...)
				r.pending = r.pending[:0]
				r.changed = true
				i++
			case tokenPrefix:
				i++
			default:
				// Not a token after all: emit what was held back but the
				// last byte, and look at that byte afresh.
				out = append(out, r.pending[:len(r.pending)-1]...)
				r.pending = r.pending[:0]
			}
			continue
		}
		if r.inString {
			if r.escaped {
				out = append(out, in[i])
				r.escaped = false
				i++
				continue
			}
			// No escape is open at i, so the string ends at the first quote
			// after an even run of backslashes.
			end := closingQuote(in, i)
			if end < 0 {
				n := 0
				for p := len(in) - 1; p >= i && in[p] == '\\'; p-- {
					n++
				}
				r.escaped = n%2 == 1
				out = append(out, in[i:]...)
				break
			}
			out = append(out, in[i:end+1]...)
			r.inString = false
			i = end + 1
			continue
		}
		switch in[i] {
		case '"':
			r.inString = true
			out = append(out, '"')
			i++
			continue
		case 'N', 'I', '-':
			r.pending = append(r.pending, in[i])
			i++
			continue
		}
		j := i + 1
		for j < len(in) && !special(in[j]) {
			j++
		}
		out = append(out, in[i:j]...)
		i = j
	}
	return out
}

// closingQuote is the index of the quote that ends the string that in[i:]
// is inside of, with no escape open at i; -1 when in ends first.
func closingQuote(in []byte, i int) int {
	for j := i; ; {
		k := bytes.IndexByte(in[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for p := q - 1; p >= i && in[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
}

func special(c byte) bool { return c == '"' || c == 'N' || c == 'I' || c == '-' }

func (r *repairer) flush(out []byte) []byte {
	out = append(out, r.pending...)
	r.pending = r.pending[:0]
	return out
}

const (
	tokenNo = iota
	tokenPrefix
	tokenFull
)

func matchToken(p []byte) int {
	for _, t := range nonFinite {
		if bytes.Equal(p, t) {
			return tokenFull
		}
		if len(p) < len(t) && bytes.HasPrefix(t, p) {
			return tokenPrefix
		}
	}
	return tokenNo
}
