package firstpaint

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The modes perch turns off while perch-ui starts: echo (typed keys would
// print over the frame), canonical input and signal keys (ctrl+c would
// kill perch-ui before it could leave the alternate screen), and the input
// translations that would change keys before Bubble Tea reads them (a
// carriage return turned into a newline reads as ctrl+j, not Enter; ctrl+s
// would stop the output).
const (
	quietLflag = unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	quietIflag = unix.ICRNL | unix.INLCR | unix.IGNCR | unix.IXON
)

// Supported says whether this system can hand a painted terminal over.
const Supported = true

// Quiet turns off the modes above on tty and returns which of them were
// on.
func Quiet(tty *os.File) (Modes, error) {
	fd := int(tty.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return Modes{}, fmt.Errorf("read the terminal's modes: %w", err)
	}
	was := Modes{Lflag: t.Lflag & quietLflag, Iflag: t.Iflag & quietIflag}
	t.Lflag &^= quietLflag
	t.Iflag &^= quietIflag
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return Modes{}, fmt.Errorf("set the terminal's modes: %w", err)
	}
	return was, nil
}

// Restore turns the modes Quiet turned off on again (TCSETS: keys already
// typed stay to be read).
func Restore(tty *os.File, m Modes) error {
	if m.Lflag&^quietLflag != 0 || m.Iflag&^quietIflag != 0 {
		return fmt.Errorf("not modes perch turns off: %+v", m)
	}
	fd := int(tty.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("read the terminal's modes: %w", err)
	}
	t.Lflag |= m.Lflag
	t.Iflag |= m.Iflag
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return fmt.Errorf("set the terminal's modes: %w", err)
	}
	return nil
}
