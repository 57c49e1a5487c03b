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

// ParseHeader splits a --header flag "Name: value". Errors never quote the
// input: a mistyped flag is likely to contain a secret.
func ParseHeader(s string) (name, value string, err error) {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return "", "", errors.New(`invalid --header: want "Name: value" (no ':' found)`)
	}
	name = strings.TrimSpace(s[:i])
	value = strings.TrimSpace(s[i+1:])
	if name == "" {
		return "", "", errors.New(`invalid --header: want "Name: value" (empty name)`)
	}
	for j := 0; j < len(name); j++ {
		if !isTokenChar(name[j]) {
			return "", "", fmt.Errorf(`invalid --header: the name has a character not allowed in a header name (at byte %d); want "Name: value"`, j+1)
		}
	}
	for j := 0; j < len(value); j++ {
		if b := value[j]; (b < 0x20 && b != '\t') || b == 0x7f {
			return "", "", fmt.Errorf("invalid --header %s: the value contains a control character", name)
		}
	}
	return name, value, nil
}

// isTokenChar reports whether b may appear in an HTTP header name (RFC 9110
// tchar).
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}
