package top

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// SnapshotMsg brings a new live snapshot to the screen.
type SnapshotMsg struct {
	Profile *model.Profile
	Tasks   Tasks // the target's threads as /proc showed them then
	Header  Header
}

// DoneMsg ends the screen: tracing is over (Text says how).
type DoneMsg struct{ Text string }

// Actions are what keys do beyond the view.
type Actions struct {
	// Quit ends tracing (the profiler detaches); a DoneMsg follows.
	Quit func()
	// Save writes a snapshot and says where.
	Save func(*model.Profile) (string, error)
}

// Screen is the full-screen view of profile top, a bubbletea model.
type Screen struct {
	act        Actions
	head       Header
	prev, cur  *Snapshot // the last two snapshots
	shownPrev  *Snapshot // what is shown (frozen while paused)
	shown      *Snapshot
	sort       Column
	scope      Scope
	opt        Options
	sel        int // index into the rows shown
	selName    string
	links      bool
	threads    bool // the thread list is open (T)
	threadTid  int  // its selected thread (0: every thread)
	paused     bool
	editing    bool
	filter     textinput.Model
	re         *regexp.Regexp
	status     string
	done       bool
	w, h       int
	lastRows   []Row
	lastView   View
	lastHeader Header
	cached     viewKey // what lastRows and lastView were computed from
}

// viewKey is what the rows depend on: View runs after every message, the
// rows change only with these.
type viewKey struct {
	prev, cur *Snapshot
	scope     Scope
	sort      Column
	filter    string
}

// NewScreen is a screen sorted by sort, before any snapshot; before are
// the target's threads when the session started (the first interval's
// CPU% is measured from them; zero: not read).
func NewScreen(act Actions, sort Column, opt Options, before Tasks) *Screen {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "regex"
	return &Screen{act: act, sort: sort, opt: opt, filter: ti, w: 120, h: 40, cur: &Snapshot{Tasks: before}}
}

// Init starts nothing: snapshots arrive as messages.
func (s *Screen) Init() tea.Cmd { return nil }

// Update handles a key, a resize, a snapshot or the end.
func (s *Screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch m := msg.(type) {
	case tea.WindowSizeMsg:
		s.w, s.h = m.Width, m.Height
	case SnapshotMsg:
		s.prev, s.cur, s.head = s.cur, NewSnapshot(m.Profile, m.Tasks), m.Header
		if !s.paused {
			s.shownPrev, s.shown, s.lastHeader = s.prev, s.cur, s.head
		}
	case DoneMsg:
		s.done, s.status = true, m.Text
		return s, tea.Quit
	case tea.KeyMsg:
		if s.editing {
			return s, s.editKey(m)
		}
		if s.threads && s.threadKey(m.String()) {
			return s, nil
		}
		s.key(m.String())
	}
	return s, nil
}

// editKey edits the filter: enter applies it, esc drops it.
func (s *Screen) editKey(m tea.KeyMsg) tea.Cmd {
	switch m.Type {
	case tea.KeyEnter:
		s.editing = false
		s.filter.Blur()
		if v := s.filter.Value(); v == "" {
			s.re = nil
		} else if re, err := regexp.Compile(v); err != nil {
			s.status = "bad filter: " + err.Error()
		} else {
			s.re, s.sel = re, 0
		}
		return nil
	case tea.KeyEsc:
		s.editing = false
		s.filter.Blur()
		s.filter.SetValue("")
		s.re = nil
		return nil
	}
	var cmd tea.Cmd
	s.filter, cmd = s.filter.Update(m)
	return cmd
}

// key handles a key outside the filter editor.
func (s *Screen) key(k string) {
	switch k {
	case "q", "ctrl+c":
		if s.act.Quit != nil {
			s.act.Quit()
		}
		s.status = "detaching…"
	case ">", "right":
		s.sort = (s.sort + 1) % numColumns
	case "<", "left":
		s.sort = (s.sort + numColumns - 1) % numColumns
	case "up", "k":
		s.move(-1)
	case "down", "j":
		s.move(1)
	case "t":
		s.nextThread()
	case "T":
		s.openThreads()
	case "c":
		s.links = !s.links
	case "/":
		s.editing = true
		s.filter.Focus()
	case "p":
		s.paused = !s.paused
		if !s.paused {
			s.shownPrev, s.shown, s.lastHeader = s.prev, s.cur, s.head
		}
	case "s":
		s.save()
	}
}

func (s *Screen) move(d int) {
	s.sel += d
	s.sel = max(0, min(s.sel, len(s.lastRows)-1))
	if s.sel < len(s.lastRows) {
		s.selName = s.lastRows[s.sel].Name
	}
}

// nextThread cycles the scope: every thread, then each thread by tid.
func (s *Screen) nextThread() {
	if s.shown == nil || s.shown.Profile == nil {
		return
	}
	var tids []int
	for i := range s.shown.Profile.Threads {
		tids = append(tids, s.shown.Profile.Threads[i].Tid)
	}
	slices.Sort(tids)
	tids = slices.Compact(tids)
	i := slices.Index(tids, s.scope.Tid)
	switch {
	case s.scope.Tid == 0 && len(tids) > 0:
		s.scope.Tid = tids[0]
	case i >= 0 && i+1 < len(tids):
		s.scope.Tid = tids[i+1]
	default:
		s.scope.Tid = 0
	}
	s.sel = 0
}

func (s *Screen) save() {
	if s.act.Save == nil || s.cur.Profile == nil {
		s.status = "nothing to save yet"
		return
	}
	where, err := s.act.Save(s.cur.Profile)
	if err != nil {
		s.status = "save: " + err.Error()
		return
	}
	s.status = "saved " + where
}

var (
	titleStyle  = lipgloss.NewStyle().Bold(true).Reverse(true)
	headStyle   = lipgloss.NewStyle().Bold(true).Underline(true)
	sortStyle   = headStyle.Foreground(lipgloss.Color("3"))
	selStyle    = lipgloss.NewStyle().Reverse(true)
	dimStyle    = lipgloss.NewStyle().Faint(true)
	statusStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
)

// The table's columns are tableHeader's: a right-aligned width and the
// sort key (-1: none) of each, the name last.
var (
	columnWidths = []int{10, 9, 7, 9, 7, 12, 10}
	columnSorts  = []Column{ByCallsPerSec, BySelf, -1, ByTotal, -1, ByCalls, BySelfAll}
)

// View draws the screen.
func (s *Screen) View() string {
	var b strings.Builder
	if s.shown == nil || s.shown.Profile == nil {
		b.WriteString(titleStyle.Render(pad("profile top: waiting for the first snapshot…", s.w)) + "\n")
		return b.String()
	}
	key := viewKey{s.shownPrev, s.shown, s.scope, s.sort, ""}
	if s.re != nil {
		key.filter = s.re.String()
	}
	if key != s.cached || s.lastRows == nil {
		v := Refresh(s.shownPrev, s.shown, s.scope, s.opt)
		rows := Filter(v.Rows, s.re)
		Sort(rows, s.sort)
		s.lastRows, s.lastView, s.cached = rows, v, key
	}
	rows, v := s.lastRows, s.lastView
	if i := slices.IndexFunc(rows, func(r Row) bool { return r.Name == s.selName }); i >= 0 {
		s.sel = i
	}
	s.sel = max(0, min(s.sel, len(rows)-1))
	if s.sel < len(rows) {
		s.selName = rows[s.sel].Name
	}

	b.WriteString(titleStyle.Render(pad(Title(s.lastHeader, v), s.w)) + "\n")
	flags := fmt.Sprintf("sort %s  thread %s  %s times", s.sort, s.threadName(v), scopeName(v))
	if s.re != nil {
		flags += "  filter " + s.re.String()
	}
	if s.paused {
		flags += "  PAUSED"
	}
	hint := "   </> sort  t next thread  T threads  c callers/callees  / filter  p pause  s save  q quit"
	if s.threads {
		hint = "   up/down select  enter show its functions  T/esc back  q quit"
	}
	b.WriteString(flags + dimStyle.Render(hint) + "\n")
	if s.editing {
		b.WriteString(s.filter.View() + "\n")
	} else {
		b.WriteString("\n")
	}
	if s.threads {
		s.threadLines(&b, v.ThreadList)
		b.WriteString(statusStyle.Render(s.status))
		return b.String()
	}

	hi := slices.Index(columnSorts, s.sort)
	if s.sort == ByName {
		hi = len(tableHeader) - 1
	}
	b.WriteString(headLine(tableHeader, columnWidths, hi) + "\n")

	lines := s.h - 6
	var panel []string
	if s.links && s.sel < len(rows) {
		panel = s.linkLines(rows[s.sel])
		lines -= len(panel)
	}
	first, end := window(s.sel, len(rows), lines)
	for i := first; i < end; i++ {
		b.WriteString(s.selected(cellLine(Cells(rows[i]), columnWidths, s.w), i == s.sel) + "\n")
	}
	for _, l := range panel {
		b.WriteString(l + "\n")
	}
	b.WriteString(statusStyle.Render(s.status))
	return b.String()
}

// threadWidths are threadHeader's right-aligned widths, the name last.
var threadWidths = []int{7, 7, 7, 9, 9, 10}

// threadLines draws the thread list: every thread first, then each.
func (s *Screen) threadLines(b *strings.Builder, list []ThreadRow) {
	b.WriteString(headLine(threadHeader, threadWidths, -1) + "\n")
	sel := s.threadIndex(list)
	first, end := window(sel, len(list)+1, s.h-6)
	for i := first; i < end; i++ {
		cells := make([]string, len(threadHeader))
		cells[len(cells)-1] = "(every thread)"
		if i > 0 {
			cells = ThreadCells(list[i-1])
		}
		b.WriteString(s.selected(cellLine(cells, threadWidths, s.w), i == sel) + "\n")
	}
}

// openThreads opens the thread list on the thread in view.
func (s *Screen) openThreads() {
	s.threads, s.threadTid = true, s.scope.Tid
}

// threadIndex is the row of the selected thread in the list drawn from
// list: 0 for every thread, or one that is gone.
func (s *Screen) threadIndex(list []ThreadRow) int {
	if s.threadTid == 0 {
		return 0
	}
	return slices.IndexFunc(list, func(r ThreadRow) bool { return r.Tid == s.threadTid }) + 1
}

// threadKey handles a key in the thread list; false: a key of the
// function table's (sort, pause, save, quit).
func (s *Screen) threadKey(k string) bool {
	list := s.lastView.ThreadList
	i := s.threadIndex(list)
	switch k {
	case "up", "k":
		i = max(i-1, 0)
	case "down", "j":
		i = min(i+1, len(list))
	case "enter":
		s.scope.Tid, s.threads, s.sel = s.threadTid, false, 0
		return true
	case "T", "esc":
		s.threads = false
		return true
	default:
		return false
	}
	s.threadTid = 0
	if i > 0 {
		s.threadTid = list[i-1].Tid
	}
	return true
}

// threadName is the thread in view, by tid and name.
func (s *Screen) threadName(v View) string {
	if s.scope.Tid == 0 {
		return "all"
	}
	for _, r := range v.ThreadList {
		if r.Tid == s.scope.Tid {
			return fmt.Sprintf("%d %s", r.Tid, r.Name)
		}
	}
	return fmt.Sprint(s.scope.Tid)
}

// window is the rows [first, end) of n that fit in lines, row sel among
// them.
func window(sel, n, lines int) (first, end int) {
	lines = max(lines, 1)
	if sel >= lines {
		first = sel - lines + 1
	}
	return first, min(n, first+lines)
}

// selected is a table line, highlighted across the screen if sel.
func (s *Screen) selected(line string, sel bool) string {
	if sel {
		return selStyle.Render(pad(line, s.w))
	}
	return line
}

// headLine is a table's column titles: right-aligned in widths, the last
// (a name) left; column hi highlighted as the sort column (-1: none).
func headLine(titles []string, widths []int, hi int) string {
	var b strings.Builder
	for i, t := range titles {
		st := headStyle
		if i == hi {
			st = sortStyle
		}
		if i == len(titles)-1 {
			b.WriteString(st.Render(t))
			break
		}
		b.WriteString(st.Render(fmt.Sprintf("%*s", widths[i], t)) + " ")
	}
	return b.String()
}

// cellLine is one row of a table, cut to width.
func cellLine(cells []string, widths []int, width int) string {
	var b strings.Builder
	for i, c := range cells[:len(cells)-1] {
		fmt.Fprintf(&b, "%*s ", widths[i], c)
	}
	b.WriteString(cells[len(cells)-1])
	return cut(b.String(), width)
}

// linkLines are the callers and callees of the selected function.
func (s *Screen) linkLines(r Row) []string {
	callers, callees := Neighbours(s.shownPrev.Times(s.opt.Wall), s.shown.Times(s.opt.Wall), s.scope, r.Func, s.opt)
	out := []string{"", headStyle.Render("callers of " + r.Display)}
	add := func(ls []Link) {
		if len(ls) == 0 {
			out = append(out, dimStyle.Render("  (none)"))
		}
		for i, l := range ls {
			if i == 5 {
				out = append(out, dimStyle.Render(fmt.Sprintf("  … %d more", len(ls)-5)))
				break
			}
			out = append(out, cut(fmt.Sprintf("  %10s calls %9s total   %s", human.Count(l.DCalls), human.Duration(l.DTotals), l.Display), s.w))
		}
	}
	add(callers)
	out = append(out, headStyle.Render("callees of "+r.Display))
	add(callees)
	return out
}

func pad(s string, w int) string {
	if n := lipgloss.Width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func cut(s string, w int) string {
	if w <= 0 || len(s) <= w {
		return s
	}
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	return string(r[:w-1]) + "…"
}
