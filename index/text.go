package index

import (
	"bytes"
	"compress/flate"
	"database/sql/driver"
	"fmt"
	"io"

	"modernc.org/sqlite"
)

// A message's text is kept once, compressed, in messages.z; the search
// table (FTS5, external content) reads it back through the view
// message_texts with perch_text when it cuts a snippet. Kept as FTS5's
// own content, the texts were the biggest part of the index (0.42 of the
// session files' bytes in the bench's corpus).

// The first byte of z says how the rest is written.
const (
	textRaw   = 0
	textFlate = 1
)

// zipper writes texts as messages.z keeps them, with one compressor (a
// new one costs more than a short text's compression).
type zipper struct {
	buf bytes.Buffer
	zw  *flate.Writer
}

// zip is text as messages.z keeps it: deflated when that is smaller.
func (z *zipper) zip(text string) []byte {
	if len(text) >= 64 {
		z.buf.Reset()
		z.buf.WriteByte(textFlate)
		if z.zw == nil {
			z.zw, _ = flate.NewWriter(&z.buf, flate.BestSpeed)
		} else {
			z.zw.Reset(&z.buf)
		}
		z.zw.Write([]byte(text))
		if z.zw.Close() == nil && z.buf.Len() < len(text)+1 {
			return bytes.Clone(z.buf.Bytes())
		}
	}
	return append([]byte{textRaw}, text...)
}

// unzipText reads what zipText wrote.
func unzipText(z []byte) (string, error) {
	if len(z) == 0 {
		return "", nil
	}
	switch z[0] {
	case textRaw:
		return string(z[1:]), nil
	case textFlate:
		b, err := io.ReadAll(flate.NewReader(bytes.NewReader(z[1:])))
		if err != nil {
			return "", fmt.Errorf("a message's text: %w", err)
		}
		return string(b), nil
	}
	return "", fmt.Errorf("a message's text: unknown encoding %d", z[0])
}

// The driver's connections, every one, know perch_text: the view that
// FTS5 reads its content from calls it.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("perch_text", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		z, _ := args[0].([]byte)
		return unzipText(z)
	})
}
