//go:build !linux

package firstpaint

import (
	"errors"
	"os"
)

// Supported says whether this system can hand a painted terminal over:
// elsewhere perch does not paint, and perch-ui draws the first frame.
const Supported = false

var errUnsupported = errors.New("the first paint is only done on Linux")

// Quiet is not done here (Supported is false).
func Quiet(*os.File) (Modes, error) { return Modes{}, errUnsupported }

// Restore is not needed here: nothing was turned off.
func Restore(*os.File, Modes) error { return nil }
