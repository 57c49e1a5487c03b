package maria

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Discover finds the daemon's base URL: the --url flag, else $PERCH_URL,
// else the port in <home>/.moonagent/daemon.json (written by `maria
// daemon`), giving http://localhost:PORT/v1. fromFile reports the last
// case; pass WithDiscovered to New then. It says "localhost", never an
// address: the daemon listens on [::1] only, many hosts map localhost to
// 127.0.0.1 alone, and the client tries every loopback address for
// localhost (see loopbackDialer). getenv defaults to os.Getenv.
//
// The result is not validated here; New does that.
func Discover(flagURL string, getenv func(string) string, home string) (u string, fromFile bool, err error) {
	if s := strings.TrimSpace(flagURL); s != "" {
		return s, false, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if s := strings.TrimSpace(getenv("PERCH_URL")); s != "" {
		return s, false, nil
	}
	const tried = "--url is not set, $PERCH_URL is not set"
	const suggest = "start the daemon (maria daemon) or pass --url / set PERCH_URL, e.g. http://localhost:8090/v1"
	if home == "" {
		return "", false, fmt.Errorf("cannot find the daemon: %s, and no home directory to look for .moonagent/daemon.json; %s", tried, suggest)
	}
	path := filepath.Join(home, ".moonagent", "daemon.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", false, fmt.Errorf("cannot find the daemon: %s, and %s does not exist; %s", tried, path, suggest)
		}
		return "", false, fmt.Errorf("cannot find the daemon: %s, and reading %s failed: %w; %s", tried, path, err, suggest)
	}
	var info struct {
		Port json.Number `json:"port"`
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return "", false, fmt.Errorf("cannot find the daemon: %s is not valid JSON (%v); %s", path, err, suggest)
	}
	port, err := strconv.Atoi(info.Port.String())
	if err != nil || port <= 0 || port > 65535 {
		return "", false, fmt.Errorf("cannot find the daemon: %s has no valid port (%q); %s", path, info.Port.String(), suggest)
	}
	return fmt.Sprintf("http://localhost:%d/v1", port), true, nil
}
