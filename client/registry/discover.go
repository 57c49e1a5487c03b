package registry

import (
	"github.com/perch-tui/perch/client"
	"github.com/perch-tui/perch/client/maria"
)

// Local names the system whose daemon Discover finds.
const Local = client.Maria

// Discover finds the agent daemon of this machine, for a command given no
// URL (neither --url nor $PERCH_URL): maria's, whose port `maria daemon`
// writes to <home>/.moonagent/daemon.json. It returns the system's name
// and its base URL; open it with Config.Discovered set. The error says
// where perch looked and what to do (start the daemon, or give --url).
func Discover(home string) (name, url string, err error) {
	// maria.Discover looks at a flag and $PERCH_URL first: the caller
	// has, and its error says that they are not set.
	url, _, err = maria.Discover("", func(string) string { return "" }, home)
	if err != nil {
		return "", "", err
	}
	return Local, url, nil
}
