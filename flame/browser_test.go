package flame_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/model/modeltest"
)

// chromium is the path of Chromium, installed from Debian when missing and
// the test may install it (root, apt-get); otherwise the test is skipped.
func chromium(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Geteuid() != 0 {
		t.Skip("chromium is not installed and only root may install it (apt-get install chromium)")
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		t.Skip("chromium is not installed and there is no apt-get to install it")
	}
	install := func() ([]byte, error) {
		cmd := exec.Command(apt, "install", "-y", "chromium")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	t.Log("chromium is not installed: apt-get install -y chromium")
	out, err := install()
	if err != nil { // the package lists may be missing or stale
		if upd, err := exec.Command(apt, "update").CombinedOutput(); err != nil {
			t.Logf("apt-get update: %v\n%s", err, upd)
		}
		out, err = install()
	}
	p, lerr := exec.LookPath("chromium")
	if lerr != nil {
		t.Skipf("chromium is not installed and apt-get could not install it: %v\n%s", err, out)
	}
	return p
}

// The flame graph opens in headless Chromium and draws; clicking a frame
// zooms into it (it takes the full width, its callees widen, the frames
// beside it hide), Reset Zoom undoes it, and Search highlights the
// matching frames and shows their share.
func TestBrowserZoomAndSearch(t *testing.T) {
	svg, doc := render(t, modeltest.Sample(), flame.Options{})
	b := open(t, svg)
	ctx, eval, click := b.ctx, b.eval, b.click
	// Frames of Sample (total time, 1735 ns in 1180 px): worker (470 ns)
	// and main beside it under all, compute (420 ns) inside worker.
	frame := func(depth int, name string) svgFrame {
		for _, f := range doc.Frames {
			if f.D == depth && f.name() == name {
				return f
			}
		}
		t.Fatalf("no frame %s at depth %d", name, depth)
		return svgFrame{}
	}
	all, worker, main, compute := frame(0, "all"), frame(1, "worker"), frame(1, "main"), frame(2, "compute")

	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	shotFile := filepath.Join(filepath.Dir(b.file), "flame.png")
	if err := os.WriteFile(shotFile, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s, %d bytes", shotFile, len(shot))
	if dst := os.Getenv("FLAME_SCREENSHOT"); dst != "" { // keep it to look at
		os.WriteFile(dst, shot, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colours := map[[4]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 300 || len(colours) < 20 {
		t.Fatalf("screenshot %dx%d with %d colours, want 1200x300 with the frames' many", b.Dx(), b.Dy(), len(colours))
	}

	width := func(f svgFrame) string {
		return eval(`document.querySelector("#` + f.ID + ` rect").getAttribute("width")`)
	}
	display := func(id string) string {
		return eval(`getComputedStyle(document.getElementById("` + id + `")).display`)
	}

	click(worker.ID)
	if w := width(worker); w != "1180.00" {
		t.Errorf("zoomed worker is %s px wide, want the full 1180.00", w)
	}
	if w := width(compute); w != "1054.47" { // 420/470 of 1180
		t.Errorf("zoomed compute is %s px wide, want 1054.47", w)
	}
	if d := display(main.ID); d != "none" {
		t.Errorf("main beside the zoomed worker: display %s, want none", d)
	}
	if d, c := display(all.ID), eval(`document.getElementById("`+all.ID+`").getAttribute("class")`); d == "none" || c != "f anc" {
		t.Errorf("all under the zoomed worker: display %s, class %q; want shown as an ancestor", d, c)
	}
	if d := display("unzoom"); d == "none" {
		t.Error("Reset Zoom hidden while zoomed")
	}

	click("unzoom")
	if w, want := width(worker), px(worker.Rect.Width); w != want {
		t.Errorf("after Reset Zoom worker is %s px wide, want %s", w, want)
	}
	if d := display(main.ID); d == "none" {
		t.Error("main still hidden after Reset Zoom")
	}
	if d := display("unzoom"); d != "none" {
		t.Errorf("Reset Zoom still shown after it: display %s", d)
	}

	// Search asks for a regular expression; fib's frames are main;fib
	// (110 ns, holding two more fib frames) and child_work;fib (25 ns):
	// 135 of 1735 ns.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: "^fib$"})
		}
	}()
	click("search")
	if m := eval(`document.getElementById("matched").textContent`); m != "Matched: 7.78%" {
		t.Errorf("search ^fib$: %q, want Matched: 7.78%%", m)
	}
	hits := eval(`Array.from(document.querySelectorAll("g.f")).filter(g => g.querySelector("rect").getAttribute("fill") === "rgb(230,0,230)").map(g => g.querySelector("title").textContent.split("\n")[0]).join(",")`)
	if hits != "fib,fib,fib,fib,fib" {
		t.Errorf("highlighted %q, want the five fib frames", hits)
	}
	click("search") // now Reset Search
	if hits := eval(`String(document.querySelectorAll('rect[fill="rgb(230,0,230)"]').length)`); hits != "0" {
		t.Errorf("%s frames still highlighted after Reset Search", hits)
	}
}

// browser is a flame graph open in headless Chromium.
type browser struct {
	t    *testing.T
	ctx  context.Context
	file string
}

// open writes svg to a file and opens it in headless Chromium, 1200×300,
// once its script has run; the browser closes when the test ends.
func open(t *testing.T, svg []byte) *browser {
	t.Helper()
	exe := chromium(t)
	file := filepath.Join(t.TempDir(), "flame.svg")
	if err := os.WriteFile(file, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU) // chromedp makes and removes the user data directory
	ctx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 300), chromedp.Navigate("file://"+file)); err != nil {
		t.Fatalf("open %s: %v", file, err)
	}
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof flame === "object"`)); err != nil || !ok {
		t.Fatalf("the script did not run: %v", err)
	}
	return &browser{t: t, ctx: ctx, file: file}
}

// eval runs a script that returns a string.
func (b *browser) eval(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// click clicks the element of id.
func (b *browser) click(id string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.ID(id))); err != nil {
		b.t.Fatalf("click %s: %v", id, err)
	}
}

func px(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
