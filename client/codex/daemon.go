package codex

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/coder/websocket"

	"github.com/perch-tui/perch/client/normalize"
)

// Codex's app-server daemon (started by the TUI by default, or by `codex
// app-server daemon start`) owns the threads it runs and answers on a
// control socket, $CODEX_HOME/app-server-control/app-server-control.sock:
// its app-server protocol (JSON-RPC) over a WebSocket. thread/read gives
// a thread's status, which, unlike the files, tells a turn at work from
// one waiting for the user's approval. perch asks only about the threads
// whose files say a turn runs, and only reads.

// daemonAsk bounds one round of questions to the daemon.
const daemonAsk = time.Second

// daemonState is what the daemon says of a thread it has loaded.
type daemonState struct {
	status   string // idle, active, systemError, notLoaded
	approval bool   // active, waiting for the user to approve
	input    bool   // active, waiting for the user's answer
}

func (l *Local) daemonSock() string {
	return filepath.Join(l.dir, "app-server-control", "app-server-control.sock")
}

// daemonStates asks the daemon about threads; nil when no daemon answers
// (none runs, an older Codex, the TUI running threads itself).
func (l *Local) daemonStates(threads []string) map[string]daemonState {
	if len(threads) == 0 {
		return nil
	}
	sock := l.daemonSock()
	if _, err := os.Stat(sock); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), daemonAsk)
	defer cancel()
	states, err := askDaemon(ctx, sock, threads)
	if err != nil {
		return nil
	}
	return states
}

func askDaemon(ctx context.Context, sock string, threads []string) (map[string]daemonState, error) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	c, _, err := websocket.Dial(ctx, "ws://localhost/", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	defer c.CloseNow()
	c.SetReadLimit(16 << 20)
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return c.Write(ctx, websocket.MessageText, b)
	}
	if err := send(map[string]any{"id": 0, "method": "initialize",
		"params": map[string]any{"clientInfo": map[string]any{"name": "perch", "title": nil, "version": "1"}}}); err != nil {
		return nil, err
	}
	if _, err := reply(ctx, c, 0); err != nil {
		return nil, err
	}
	if err := send(map[string]any{"method": "initialized"}); err != nil {
		return nil, err
	}
	for i, id := range threads {
		if err := send(map[string]any{"id": i + 1, "method": "thread/read", "params": map[string]any{"threadId": id}}); err != nil {
			return nil, err
		}
	}
	states := map[string]daemonState{}
	for range threads {
		msg, err := reply(ctx, c, -1)
		if err != nil {
			return states, nil // what came is kept
		}
		n, ok := normalize.Int(msg["id"])
		if !ok || n < 1 || int(n) > len(threads) {
			continue
		}
		thread := normalize.AsObjectShared(normalize.AsObjectShared(msg["result"])["thread"])
		st := normalize.AsObjectShared(thread["status"])
		if st == nil {
			continue // an error: a thread the daemon does not know
		}
		s := daemonState{status: normalize.StrField(st, "type")}
		for _, f := range normalize.AsListShared(st["activeFlags"]) {
			switch normalize.Str(f) {
			case "waitingOnApproval":
				s.approval = true
			case "waitingOnUserInput":
				s.input = true
			}
		}
		states[threads[n-1]] = s
	}
	return states, nil
}

// reply reads messages until the answer to request id (any answer when
// id < 0), skipping the daemon's notifications.
func reply(ctx context.Context, c *websocket.Conn, id int64) (normalize.Object, error) {
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		msg := normalize.AsObject(b)
		n, ok := normalize.Int(msg["id"])
		if !ok {
			continue // a notification
		}
		if id < 0 || n == id {
			if e := msg["error"]; e != nil && id >= 0 {
				return nil, errors.New("the Codex daemon refused: " + normalize.Excerpt(e))
			}
			return msg, nil
		}
	}
}
