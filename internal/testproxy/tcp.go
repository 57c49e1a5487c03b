package testproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TCP forwards raw TCP to Target on a local address; Stop kills it and
// every connection (a daemon going away), Start brings it back on the same
// port. Addr is "127.0.0.1:0" to pick a port on the first Start.
type TCP struct {
	Addr, Target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
	wg           sync.WaitGroup
	down         atomic.Int64 // bytes forwarded from Target to clients
}

// Down is how many bytes went from Target to the clients so far (across
// restarts): a test waits on it to know a response is flowing.
func (p *TCP) Down() int64 { return p.down.Load() }

// counter counts what is written through it.
type counter struct {
	w io.Writer
	n *atomic.Int64
}

func (c counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// Start listens on Addr (retrying while the port is still being freed)
// and forwards each connection.
func (p *TCP) Start(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 100 {
		if ln, err = net.Listen("tcp", p.Addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.Addr = ln.Addr().String()
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.Target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); io.Copy(up, c); up.Close() }()
			go func() { defer p.wg.Done(); io.Copy(counter{c, &p.down}, up); c.Close() }()
		}
	}()
}

// Stop closes the listener and every connection, and waits for them.
func (p *TCP) Stop() {
	p.mu.Lock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
