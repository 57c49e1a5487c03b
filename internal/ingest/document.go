package ingest

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/perch-tui/perch/internal/jsonx"
)

// errUnusual stops the fast document reader: what follows is not a
// well-formed document, and the encoding/json reader takes over, so that
// errors read as they always have.
var errUnusual = errors.New("unusual document")

// docReader is the fast path of EachElement: it finds the end of each value
// with a structural scan (strings skipped by their closing quote, brackets
// counted), checks the value with jsonx, and hands over a copy. Anything
// it does not expect (invalid JSON, a document cut short) ends it with
// errUnusual and the number of elements delivered, and EachElement reads
// the file again with json.Decoder, skipping those.
type docReader struct {
	r   io.Reader
	buf []byte
	pos int // the next byte to read; buf[:pos] is done with
	eof bool
	err error // a read error other than io.EOF
	n   int   // elements delivered
}

// fill reads more input, keeping buf[keep:] (keep <= pos), and returns
// how far the kept bytes moved back.
func (d *docReader) fill(keep int) (int, error) {
	if d.eof || d.err != nil {
		return 0, errUnusual // cut short: encoding/json says how
	}
	shift := keep
	n := copy(d.buf, d.buf[keep:])
	d.buf = d.buf[:n]
	d.pos -= shift
	if cap(d.buf)-len(d.buf) < cap(d.buf)/2 {
		grown := make([]byte, len(d.buf), 2*cap(d.buf))
		copy(grown, d.buf)
		d.buf = grown
	}
	// Read until the buffer is full, so that a long value is scanned again
	// only after the buffer doubled.
	for len(d.buf) < cap(d.buf) {
		m, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+m]
		if errors.Is(err, io.EOF) {
			d.eof = true
			break
		}
		if err != nil {
			d.err = err
			return shift, errUnusual
		}
	}
	return shift, nil
}

// next is the next byte that is not JSON white space, at d.pos.
func (d *docReader) next() (byte, error) {
	for {
		for d.pos < len(d.buf) {
			switch c := d.buf[d.pos]; c {
			case ' ', '\t', '\n', '\r':
				d.pos++
			default:
				return c, nil
			}
		}
		if _, err := d.fill(d.pos); err != nil {
			return 0, err
		}
	}
}

// value reads the value at d.pos (not white space), checked, and returns
// it in place (valid until the next read).
func (d *docReader) value() ([]byte, error) {
	for {
		if end := valueEnd(d.buf, d.pos, d.eof); end > d.pos {
			v := d.buf[d.pos:end]
			if !jsonx.Valid(v) {
				return nil, errUnusual
			}
			d.pos = end
			return v, nil
		}
		if _, err := d.fill(d.pos); err != nil {
			return nil, err
		}
	}
}

// valueEnd is where the value at b[i] ends, by its structure only (the
// caller checks it), or -1 when b ends first. eof says nothing follows b.
func valueEnd(b []byte, i int, eof bool) int {
	switch b[i] {
	case '"':
		if e := stringEnd(b, i+1); e >= 0 {
			return e + 1
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j+1)
				if e < 0 {
					return -1
				}
				j = e
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	// A number or a literal: up to the next delimiter.
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', ']', '}', ' ', '\t', '\n', '\r', '"', '[', '{', ':':
			return j
		}
	}
	if eof {
		return len(b)
	}
	return -1
}

// stringEnd is the index of the quote that ends the string whose body
// starts at b[i], or -1.
func stringEnd(b []byte, i int) int {
	if i > len(b) {
		return -1
	}
	return closingQuote(b, i)
}

// elements delivers the elements of the array whose '[' was read.
func (d *docReader) elements(fn func(int, json.RawMessage) error) error {
	c, err := d.next()
	if err != nil {
		return err
	}
	if c == ']' {
		d.pos++
		return nil
	}
	for i := 0; ; i++ {
		v, err := d.value()
		if err != nil {
			return err
		}
		// A copy: callers may keep it, and the buffer moves on.
		if err := fn(i, append(json.RawMessage(nil), v...)); err != nil {
			return err
		}
		d.n++
		c, err := d.next()
		if err != nil {
			return err
		}
		d.pos++
		switch c {
		case ',':
			if _, err := d.next(); err != nil {
				return err
			}
		case ']':
			return nil
		default:
			return errUnusual
		}
	}
}

// document reads the document as eachElement does.
func (d *docReader) document(field string, fn func(int, json.RawMessage) error) (Record, error) {
	c, err := d.next()
	if err != nil {
		return nil, err
	}
	d.pos++
	switch c {
	case '[':
		return nil, d.elements(fn)
	case '{':
	default:
		return nil, errUnusual
	}
	top := Record{}
	c, err = d.next()
	if err != nil {
		return top, err
	}
	if c == '}' {
		return top, nil
	}
	done := false
	for {
		if c != '"' {
			return top, errUnusual
		}
		kv, err := d.value()
		if err != nil {
			return top, err
		}
		key, _ := jsonx.Unquote(kv)
		if c, err = d.next(); err != nil {
			return top, err
		}
		if c != ':' {
			return top, errUnusual
		}
		d.pos++
		if c, err = d.next(); err != nil {
			return top, err
		}
		if !done && (field == "" || key == field) && c == '[' {
			d.pos++
			if err := d.elements(fn); err != nil {
				return top, err
			}
			done = true
		} else {
			v, err := d.value()
			if err != nil {
				return top, err
			}
			top[key] = append(json.RawMessage(nil), v...)
		}
		if c, err = d.next(); err != nil {
			return top, err
		}
		d.pos++
		switch c {
		case ',':
			if c, err = d.next(); err != nil {
				return top, err
			}
		case '}':
			return top, nil
		default:
			return top, errUnusual
		}
	}
}

// readDocument runs the fast reader over r; unusual says the document
// must be read again by the encoding/json reader, skipping the n elements
// delivered.
func readDocument(r io.Reader, field string, fn func(int, json.RawMessage) error) (top Record, n int, unusual bool, err error) {
	d := &docReader{r: r, buf: make([]byte, 0, 1<<20)}
	top, err = d.document(field, fn)
	if errors.Is(err, errUnusual) {
		return nil, d.n, true, nil
	}
	return top, d.n, false, err
}
