package cli

import (
	"strconv"

	"github.com/perch-tui/perch/client/registry"
)

// showTables is perch config's lines of the tables it reads beside the
// top-level settings: every [[source]] (its token never printed, only
// where it comes from) and [notify] (each signal on or off, and
// whether the file or the default says so).
func showTables(f fileConfig, line func(name, value, from string)) {
	for i, s := range f.Sources {
		name := "source." + strconv.Itoa(i+1)
		if s.Name != "" {
			name = "source." + string(s.Name)
		}
		v := registry.RedactURL(string(s.URL))
		if s.Backend != "" {
			v += "  backend " + string(s.Backend)
		}
		switch {
		case s.Token != "":
			v += "  token REDACTED"
		case s.TokenCommand != "":
			v += "  token from token_command"
		}
		line(name, v, "config file")
	}
	k := f.Notify.kinds()
	for _, n := range []struct {
		key string
		set *bool
		on  bool
	}{{"bell", f.Notify.Bell, k.Bell}, {"osc9", f.Notify.OSC9, k.OSC9}, {"osc777", f.Notify.OSC777, k.OSC777}} {
		from := "default"
		if n.set != nil {
			from = "config file"
		}
		v := "off"
		if n.on {
			v = "on"
		}
		line("notify."+n.key, v, from)
	}
}
