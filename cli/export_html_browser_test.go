package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/perch-tui/perch/fakedaemon"
)

// chromium is the browser the page tests open, or a skip (a failure with
// PERCH_E2E_REQUIRED=1, as CI sets it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PERCH_E2E_REQUIRED") == "1" {
		t.Fatal("no chromium to open the exported pages (PERCH_E2E_REQUIRED=1): apt-get install chromium")
	}
	t.Skip("no chromium: the exported pages are not opened in a browser")
	return ""
}

// pageCase is one exported page and what must be on it.
type pageCase struct {
	name  string
	path  string
	final string // the session's last reply, as its jsonl export says it
}

// finalReply is the text of the last assistant record of a jsonl export
// that has one.
func finalReply(t *testing.T, jsonl string) string {
	t.Helper()
	last := ""
	for l := range strings.SplitSeq(jsonl, "\n") {
		var r struct{ Type, Text string }
		if json.Unmarshal([]byte(l), &r) == nil && r.Type == "assistant" && strings.TrimSpace(r.Text) != "" {
			last = r.Text
		}
	}
	if last == "" {
		t.Fatal("the export has no reply with text")
	}
	return last
}

var wordRE = regexp.MustCompile(`\b[A-Za-z]{5,}\b`)

// words are a reply's longer plain words, longest first: Markdown turns
// the rest of a reply into markup, but these show as they are.
func words(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range wordRE.FindAllString(text, -1) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out[:min(len(out), 5)]
}

// TestHTMLPagesInBrowser opens the pages perch exports, from the fake
// daemon's demo and long session, real Claude Code and Codex session
// files and the seeded corpus, in headless Chromium with its network off
// (a dead proxy, no name resolution), one browser for all, and checks
// each page: nothing is requested or refused, the final reply is on it,
// the search box finds a word, and a collapsed block opens. The long
// session (10,000 events) must paint its first screen within 2 s, and a
// screenshot at 1280×800 must be a picture.
func TestHTMLPagesInBrowser(t *testing.T) {
	// Not parallel: a browser and a 10,000-event export would slow the
	// timing-sensitive tests that run in parallel.
	browser := chromium(t)
	dir := t.TempDir()
	ctx := context.Background()
	var pages []pageCase

	// The demo task of the fake daemon, exported live.
	d, base := fake(t, "head", fastSpeed)
	id, err := d.SeedDemo()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waitHighlightClock(t) })
	demo := filepath.Join(dir, "demo.html")
	must(t, run(t, "", "export", id, "--url", base, "--format", "html", "--until-idle", "-o", demo))
	jl := must(t, run(t, "", "export", id, "--url", base, "--format", "jsonl", "--until-idle", "--redact")).stdout
	pages = append(pages, pageCase{"demo", demo, finalReply(t, jl)})

	// Real session files, and the seeded corpus.
	seeded := filepath.Join(dir, "seeded.jsonl")
	writeSeededSession(t, seeded)
	for _, f := range []struct{ name, src string }{
		{"claude-code", filepath.Join("..", "client", "claudecode", "testdata", "real", "tools.session.jsonl")},
		{"codex", filepath.Join("..", "client", "codex", "testdata", "cli-session.jsonl")},
		{"seeded", seeded},
	} {
		out := filepath.Join(dir, f.name+".html")
		must(t, runEnv(ctx, t, seededEnv, "", "import", f.src, "--format", "html", "-o", out))
		final := seededFinal // the hostile markup before it shows as no words
		if f.src != seeded {
			final = finalReply(t, must(t, runEnv(ctx, t, seededEnv, "", "import", f.src, "--format", "jsonl", "--redact")).stdout)
		}
		pages = append(pages, pageCase{f.name, out, final})
	}

	// A 10,000-event session.
	info, lbase := longSessionDaemon(t, 7, fakedaemon.LongSession{Events: 10000, Seed: 3})
	long := filepath.Join(dir, "long.html")
	must(t, run(t, "", "export", info.TaskID, "--url", lbase, "--format", "html", "-o", long))
	pages = append(pages, pageCase{"long", long, info.FinalReply})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox, // CI runs as root
		chromedp.ProxyServer("127.0.0.1:9"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	for _, p := range pages {
		checkPage(t, bctx, p)
	}
}

// checkPage opens one page in a new tab of the browser and checks it.
func checkPage(t *testing.T, bctx context.Context, p pageCase) {
	tctx, cancelTab := chromedp.NewContext(bctx)
	defer cancelTab()
	tctx, cancel := context.WithTimeout(tctx, 60*time.Second)
	defer cancel()
	pageURL := (&url.URL{Scheme: "file", Path: p.path}).String()

	var mu sync.Mutex
	var requests, refused []string
	if err := chromedp.Listen(tctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != pageURL {
				requests = append(requests, ev.Request.URL)
			}
		case *log.EventEntryAdded:
			if ev.Entry.Source == "security" || ev.Entry.Source == "network" {
				refused = append(refused, ev.Entry.Text)
			}
		}
	}); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	err := chromedp.Do(tctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, log.Enable, struct{}{})
			return err
		}),
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(pageURL),
	)
	if err != nil {
		t.Fatalf("%s: open %s: %v", p.name, p.path, err)
	}
	evalWith := func(js string, v any, opts ...chromedp.EvaluateOption) {
		t.Helper()
		raw, err := chromedp.Run(tctx, chromedp.Evaluate[json.RawMessage](js, opts...))
		if err != nil {
			t.Fatalf("%s: %s: %v", p.name, js, err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %s: %v", p.name, raw, err)
		}
	}
	eval := func(js string, v any) { t.Helper(); evalWith(js, v) }
	evalAwait := func(js string, v any) { t.Helper(); evalWith(js, v, chromedp.EvalAwaitPromise) }

	// The final reply: its words in the last reply on the page.
	ws := words(p.final)
	if len(ws) == 0 {
		t.Fatalf("%s: no words in the final reply %q", p.name, p.final)
	}
	var lastReply string
	eval(`(function(){var a=document.querySelectorAll("article.a");return a.length?a[a.length-1].textContent:""})()`, &lastReply)
	for _, w := range ws {
		if !strings.Contains(lastReply, w) {
			t.Errorf("%s: the last reply on the page lacks %q (it reads %.300q)", p.name, w, lastReply)
		}
	}

	// The search box finds a word of it, and hides entries without it.
	word := ws[0]
	if err := chromedp.Do(tctx, chromedp.SetValue(chromedp.ID("q"), word), chromedp.SendKeys(chromedp.ID("q"), "\r")); err != nil {
		t.Fatalf("%s: search: %v", p.name, err)
	}
	var found struct {
		Shown, All, Without int
		Last                bool
		Said                string
	}
	eval(`(function(){var w=`+jsString(strings.ToLower(word))+`,s=0,o=0,it=document.querySelectorAll(".i");
		for(var i=0;i<it.length;i++){if(!it[i].hidden){s++;if(it[i].textContent.toLowerCase().indexOf(w)<0)o++;}}
		var a=document.querySelectorAll("article.a");
		return {Shown:s,All:it.length,Without:o,Last:!a[a.length-1].hidden,Said:document.getElementById("n").textContent}})()`, &found)
	if found.Shown == 0 || !found.Last || found.Without > 0 || !strings.HasPrefix(found.Said, fmt.Sprint(found.Shown)+" of ") {
		t.Errorf("%s: search for %q: %+v", p.name, word, found)
	}
	eval(`(function(){var q=document.getElementById("q");q.value="";q.dispatchEvent(new KeyboardEvent("keydown",{key:"Enter"}));return 0})()`, new(int))

	// A collapsed block opens when its summary is clicked (where it is
	// once the entries around it have been drawn at their sizes).
	var probe struct {
		Found     bool
		X, Y, Was float64
	}
	evalAwait(`new Promise(function(done){var s=document.querySelector("details:not([open]) > summary");
		if(!s){done({Found:false});return}
		s.parentElement.setAttribute("data-probe","1");s.scrollIntoView({block:"center"});
		requestAnimationFrame(function(){requestAnimationFrame(function(){var r=s.getBoundingClientRect();
			done({Found:true,X:r.x+r.width/2,Y:r.y+r.height/2,Was:s.parentElement.children[1].getBoundingClientRect().height})})})})`, &probe)
	if !probe.Found {
		t.Errorf("%s: nothing collapsed on the page", p.name)
	} else {
		if err := chromedp.Do(tctx, chromedp.MouseClickXY(probe.X, probe.Y)); err != nil {
			t.Fatalf("%s: click: %v", p.name, err)
		}
		var opened struct {
			Open   bool
			Height float64
		}
		eval(`(function(){var d=document.querySelector("details[data-probe]");
			return {Open:d.open,Height:d.children[1].getBoundingClientRect().height}})()`, &opened)
		if !opened.Open || opened.Height <= 0 {
			t.Errorf("%s: the clicked block did not open: %+v, before %+v", p.name, opened, probe)
		}
	}

	if p.name == "long" {
		var fcp float64
		eval(`(function(){var e=performance.getEntriesByName("first-contentful-paint");return e.length?e[0].startTime:-1})()`, &fcp)
		t.Logf("long: 10,000 events, first contentful paint after %.0f ms", fcp)
		if fcp < 0 || fcp > 2000 {
			t.Errorf("long: first screen after %.0f ms (want ≤ 2000)", fcp)
		}
	}
	if p.name == "seeded" {
		screenshot(t, tctx)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(requests) > 0 || len(refused) > 0 {
		t.Errorf("%s: requests %q, refused %q", p.name, requests, refused)
	}
}

// screenshot takes the top of the page at 1280×800 and checks that it is
// a picture of that size with something drawn; PERCH_SCREENSHOT_DIR keeps
// it for a person to look at.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.scrollTo(0,0),0`)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Errorf("screenshot is %v, want 1280×800", b.Size())
	}
	if n, ink := colours(img); n < 8 || ink < 0.01 {
		t.Errorf("screenshot looks blank: %d colours, %.3f of it drawn", n, ink)
	}
	if dir := os.Getenv("PERCH_SCREENSHOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "seeded-1280x800.png"), shot, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// colours counts an image's colours and the share of its pixels that
// are not the background (its top-left pixel).
func colours(img image.Image) (int, float64) {
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	seen := map[[4]uint32]bool{}
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			r, g, bl, a := c.RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if c != bg {
				ink++
			}
		}
	}
	return len(seen), float64(ink) / float64(b.Dx()*b.Dy())
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
