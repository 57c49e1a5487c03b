package board

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

// A source that cannot be reached says why in the words a person acts on
// ("connection refused"), not the method and URL the error starts with.
func TestClassifyKeepsTheReason(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	st := classify("work", fmt.Errorf("GET http://10.0.0.7:8080/v1/tasks/stream: %w", dial))
	if st.Conn != Down || st.Err != "connection refused" {
		t.Fatalf("classify = %v %q, want down with the reason", st.Conn, st.Err)
	}
}
