package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/client"
)

// Talking back: a follow-up goes into the session's messaging socket
// (the registry's messagingSocketPath, 0600) as one JSON line, after an
// auth line with the token of the key file beside the registry file. The
// socket answers nothing; the CLI writes a queue-operation "enqueue" line
// with the text into the transcript when it takes the message (at once
// while idle or busy, where it starts a turn or waits behind the running
// one). That line is the receipt.

// ReceiptWait bounds how long Send waits for the receipt after writing.
// A message written and not seen in the transcript by then may still
// arrive: Send says the outcome is unknown and the outbox asks Received
// before any resend.
var ReceiptWait = 10 * time.Second

// From is how perch signs what it sends (the CLI shows it as a peer's).
const From = "perch"

// Send writes a follow-up into the session's messaging socket and waits
// for the transcript's receipt. It never sends "priority": "now" (that
// discards the reply in flight). Errors: client.Retryable when nothing
// was written (no process, the socket refused); client.Permanent when the
// session has no socket; otherwise the message may have arrived.
func (l *Local) Send(ctx context.Context, sessionID string, m client.Message) (client.SendResult, error) {
	reg, ok := l.registryOf(sessionID)
	if !ok {
		return client.SendResult{}, client.Retryable(fmt.Errorf("claude-code: session %s has no running process: the message is held until it runs again", sessionID))
	}
	if reg.SocketPath == "" {
		return client.SendResult{}, client.Permanent(fmt.Errorf("%w: Claude Code %s has no messaging socket", client.ErrUnsupported, reg.Version))
	}
	token, err := l.token(reg)
	if err != nil {
		return client.SendResult{}, client.Retryable(err)
	}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	enc.SetEscapeHTML(false)
	if token != "" {
		if err := enc.Encode(map[string]string{"type": "auth", "token": token}); err != nil {
			return client.SendResult{}, client.Permanent(err)
		}
	}
	msg := map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": m.Text},
		"session_id": reg.SessionID, "from": From}
	if err := enc.Encode(msg); err != nil {
		return client.SendResult{}, client.Permanent(fmt.Errorf("claude-code: the message: %w", err))
	}
	path := l.transcriptPath(reg.SessionID, reg.Cwd)
	before := fileSize(path)
	sent := time.Now()
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := d.DialContext(dctx, "unix", reg.SocketPath)
	cancel()
	if err != nil {
		// Nothing was written: certainly not delivered.
		return client.SendResult{}, client.Retryable(fmt.Errorf("claude-code: messaging socket of session %s: %w", reg.SessionID, err))
	}
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	n, err := conn.Write(lines.Bytes())
	cerr := conn.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		if n == 0 {
			return client.SendResult{}, client.Retryable(fmt.Errorf("claude-code: write to the messaging socket of session %s: %w", reg.SessionID, err))
		}
		return client.SendResult{}, fmt.Errorf("claude-code: write to the messaging socket of session %s (%d of %d bytes went): %w", reg.SessionID, n, lines.Len(), err)
	}
	queued := reg.Status != "idle"
	if err := l.awaitReceipt(ctx, reg, path, before, m.Text, sent.Add(-time.Second)); err != nil {
		return client.SendResult{}, fmt.Errorf("claude-code: written to session %s, %w", reg.SessionID, err)
	}
	return client.SendResult{Queued: queued}, nil
}

// awaitReceipt waits until the transcript holds an enqueue of text written
// at or after since, reading only what was appended after offset from. A
// transcript not there yet (the session's first message) is looked for
// again on each try: the CLI's directory name for a cwd is not always
// the plain one.
func (l *Local) awaitReceipt(ctx context.Context, reg registryFile, path string, from int64, text string, since time.Time) error {
	deadline := time.NewTimer(ReceiptWait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := countEnqueued(path, from, text, since)
		if err == nil && n > 0 {
			return nil
		}
		if errors.Is(err, os.ErrNotExist) {
			path, from = l.transcriptPath(reg.SessionID, reg.Cwd), 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no receipt yet: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("no receipt in its transcript within %s (it may still arrive)", ReceiptWait)
		case <-tick.C:
		}
	}
}

// Received counts the deliveries of text to the session at or after
// since: the enqueue lines of its transcript (outbox.Receiver).
func (l *Local) Received(ctx context.Context, session, text string, since time.Time) (int, error) {
	t, err := l.Session(ctx, session)
	if err != nil {
		return 0, err
	}
	path := l.transcriptPath(t.ID, t.Cwd)
	n, err := countEnqueued(path, 0, text, since)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

// countEnqueued counts the queue-operation enqueue lines of text at or
// after since in the file from offset from.
func countEnqueued(path string, from int64, text string, since time.Time) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line is no queue operation: skip to its end.
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			return n, nil // the end, or a line being written
		}
		if !bytes.Contains(line, []byte(`"queue-operation"`)) {
			continue
		}
		var q struct {
			Type      string    `json:"type"`
			Operation string    `json:"operation"`
			Content   string    `json:"content"`
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(line, &q) != nil || q.Type != "queue-operation" || q.Operation != "enqueue" {
			continue
		}
		if q.Content == text && (q.Timestamp.IsZero() || !q.Timestamp.Before(since)) {
			n++
		}
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// token reads the messaging socket's token from the key file beside the
// registry file (<pid>.<hash>.key); "" when there is none.
func (l *Local) token(reg registryFile) (string, error) {
	dir := filepath.Dir(reg.path)
	keys, _ := filepath.Glob(filepath.Join(dir, strconv.Itoa(reg.PID)+".*.key"))
	for _, k := range keys {
		data, err := readSmall(k, 16<<10)
		if err != nil {
			continue
		}
		var key struct {
			Token     string `json:"peerToken"`
			ProcStart string `json:"procStart"`
		}
		if json.Unmarshal(data, &key) != nil || key.Token == "" {
			continue
		}
		if key.ProcStart != "" && reg.ProcStart != "" && key.ProcStart != reg.ProcStart {
			continue // an earlier process's with the same pid
		}
		return strings.TrimSpace(key.Token), nil
	}
	return "", nil
}
