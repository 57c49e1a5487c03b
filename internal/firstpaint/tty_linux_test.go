package firstpaint

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair and returns its terminal side.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

func modesOf(t *testing.T, tty *os.File) *unix.Termios {
	t.Helper()
	m, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestQuietAndRestore: Quiet turns off exactly the modes that were on
// among those it handles, and Restore brings the terminal back to what
// it was; modes that were off stay off.
func TestQuietAndRestore(t *testing.T) {
	tty := openPTY(t)
	start := modesOf(t, tty)
	// A user's terminal without IXON (flow control off) and with
	// everything else as usual.
	start.Iflag &^= unix.IXON
	start.Iflag |= unix.ICRNL
	start.Lflag |= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, start); err != nil {
		t.Fatal(err)
	}
	start = modesOf(t, tty)

	was, err := Quiet(tty)
	if err != nil {
		t.Fatal(err)
	}
	if was.Iflag&unix.IXON != 0 || was.Iflag&unix.ICRNL == 0 || was.Lflag != quietLflag {
		t.Errorf("Quiet says %+v were on", was)
	}
	q := modesOf(t, tty)
	if q.Lflag&quietLflag != 0 || q.Iflag&quietIflag != 0 {
		t.Errorf("after Quiet: lflag %#x iflag %#x still on", q.Lflag&quietLflag, q.Iflag&quietIflag)
	}
	if q.Oflag != start.Oflag || q.Cflag != start.Cflag {
		t.Error("Quiet changed modes it does not handle")
	}

	if err := Restore(tty, was); err != nil {
		t.Fatal(err)
	}
	if end := modesOf(t, tty); end.Lflag != start.Lflag || end.Iflag != start.Iflag {
		t.Errorf("after Restore: lflag %#x iflag %#x, want %#x %#x", end.Lflag, end.Iflag, start.Lflag, start.Iflag)
	}
	if err := Restore(tty, Modes{Lflag: unix.TOSTOP}); err == nil {
		t.Error("Restore turned on a mode perch never turns off")
	}
}
