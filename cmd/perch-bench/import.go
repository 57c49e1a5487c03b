package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perch-tui/perch/internal/gentranscript"
)

// The import measure: `perch import FILE --format jsonl` of a big
// transcript file of each kind (the registry benchmark's inputs, written
// by gentranscript), against `cat FILE > /dev/null` reading the same
// bytes in the same run. Memory must not follow the file: at the largest
// size a kind's peak RSS is held to dayRSSCap and to 1.25× its figure at
// the smallest size of this run.

// importSizes reads -import-mb: sizes in MiB, in the order given (the
// first is the one the others are held to).
func importSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		mb, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || mb < 1 {
			return nil, fmt.Errorf("-import-mb: %q is not a size in MiB", f)
		}
		out = append(out, mb)
	}
	return out, nil
}

// benchImport measures every kind at every size. Each input is written
// once, measured h.runs times and removed before the next is written, so
// that a 500 MiB run needs the disk of one file.
func (h *harness) benchImport(sizes []int) error {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	for _, g := range gentranscript.All() {
		if h.importKinds != "" && !slices.Contains(strings.Split(h.importKinds, ","), g.Name) {
			continue
		}
		scope := "import " + g.Name
		var first int64 // peak RSS at the first size
		for i, mb := range sizes {
			rss, err := h.importOne(scope, g, mb, null, first)
			if err != nil {
				return err
			}
			if i == 0 {
				first = rss
			}
		}
	}
	return nil
}

// importOne writes g's input of mb MiB, times cat and perch import on it
// alternately, adds the rows and returns perch's peak RSS.
func (h *harness) importOne(scope string, g gentranscript.Gen, mb int, null *os.File, small int64) (int64, error) {
	path := filepath.Join(h.tmp, fmt.Sprintf("import-%s-%dMiB", g.Name, mb))
	progress("%s: writing %d MiB", scope, mb)
	if err := g.Write(path, mb<<20); err != nil {
		return 0, err
	}
	defer os.Remove(path)
	// The generator's garbage would otherwise count in the next child's
	// rusage peak, which starts from the bench's own (see checkExport).
	runtime.GC()
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	var cats, imps []time.Duration
	var rss int64
	for i := range h.runs {
		progress("%s %d MiB: cat and perch import %d/%d", scope, mb, i+1, h.runs)
		c, _, err := h.runTimed(h.loadTimeout, null, "cat", path)
		if err != nil {
			return 0, err
		}
		p, m, err := h.runTimed(h.loadTimeout, null, h.perch, "import", path, "--format", "jsonl")
		if err != nil {
			return 0, err
		}
		cats, imps, rss = append(cats, c), append(imps, p), max(rss, m)
	}
	c, p := median(cats), median(imps)
	size := fmt.Sprintf("%d MiB", mb)
	h.add(row{scope: scope, name: size + ": cat FILE > /dev/null", value: fmtDur(c), base: fmtMB(st.Size()) + " file", goal: "baseline"})
	// No goal against cat: cat copies pages, import decodes every JSON
	// value (the registry benchmark holds it to 2× encoding/json).
	h.add(row{scope: scope, name: size + ": perch import --format jsonl wall", value: fmtDur(p), base: fmtDur(c) + " cat", cmp: fmtRatio(p, c)})
	r := row{scope: scope, name: size + ": import peak RSS", value: fmtMB(rss), base: fmtMB(st.Size()) + " file",
		goal: "≤ 120 MB", verdict: verdict(float64(rss) <= dayRSSCap)}
	if small > 0 {
		r.base = fmtMB(small) + " at the first size"
		r.cmp = fmt.Sprintf("%.2f×", float64(rss)/float64(small))
		r.goal = "≤ 120 MB and ≤ 1.25× first size"
		r.verdict = verdict(float64(rss) <= dayRSSCap && float64(rss) <= 1.25*float64(small))
	}
	h.add(r)
	return rss, nil
}
