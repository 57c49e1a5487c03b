package index

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"modernc.org/sqlite"
)

// Each message's text and the source's bytes are kept once, together,
// in chunks: a chunk is one zstd frame of some messages' texts followed
// by the stretch of the source those messages were read from. A message
// row points at its text (chunk, off, n). Written side by side, a text
// costs little beyond the source line it came from: the compressor finds
// it there. Kept apart (a deflate stream per message beside a gzip copy
// of the source), the texts were stored twice and the index was 0.72x
// the session files.
//
// The texts come first so that a text is read by decompressing the frame
// only as far as its end (a chunk's texts are about textBlock bytes):
// the search table (FTS5, external content) reads them through the view
// message_texts with perch_text when it cuts a snippet or forgets a row.
// The source's bytes follow; WriteCopy skips the texts and writes them.

const (
	// textBlock is how many bytes of texts a chunk holds before the next
	// message starts another: the most a snippet decompresses.
	textBlock = 64 << 10
	// copyChunk is the most source bytes one chunk holds.
	copyChunk = 8 << 20
)

// newEncoder is the compressor of chunks; its EncodeAll may be called
// from several goroutines at once.
func newEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
}

// chunk is a chunk as it is written: texts is the length of its texts.
type chunk struct {
	texts int64
	data  []byte
}

// packChunk compresses src, texts followed by source bytes.
func packChunk(enc *zstd.Encoder, src []byte, texts int) chunk {
	return chunk{texts: int64(texts), data: enc.EncodeAll(src, nil)}
}

// chunkReader decompresses a chunk as it is read, stopping where the
// reader stops.
func chunkReader(data []byte) (*zstd.Decoder, error) {
	return zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
}

// chunkText is the n bytes of texts at off in the chunk data.
func chunkText(data []byte, off, n int64) (string, error) {
	if n == 0 {
		return "", nil
	}
	d, err := chunkReader(data)
	if err != nil {
		return "", fmt.Errorf("a message's text: %w", err)
	}
	defer d.Close()
	if _, err := io.CopyN(io.Discard, d, off); err != nil {
		return "", fmt.Errorf("a message's text: %w", err)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d, b); err != nil {
		return "", fmt.Errorf("a message's text: %w", err)
	}
	return string(b), nil
}

// writeRaw writes the source bytes of the chunk data, whose texts are
// the first texts bytes.
func writeRaw(w io.Writer, data []byte, texts int64) error {
	d, err := chunkReader(data)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := io.CopyN(io.Discard, d, texts); err != nil {
		return err
	}
	_, err = io.Copy(w, d)
	return err
}

// The driver's connections, every one, know perch_text(data, off, n):
// the view that FTS5 reads its content from calls it.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("perch_text", 3, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		data, _ := args[0].([]byte)
		off, _ := args[1].(int64)
		n, _ := args[2].(int64)
		if off < 0 || n < 0 || n > maxText {
			return nil, fmt.Errorf("a message's text: bad place %d+%d", off, n)
		}
		return chunkText(data, off, n)
	})
}
