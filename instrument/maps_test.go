package instrument

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMaps(t *testing.T) {
	text := `55d0c5a00000-55d0c5a01000 r--p 00000000 08:01 1234                       /usr/bin/my prog
55d0c5a01000-55d0c5a02000 r-xp 00001000 08:01 1234                       /usr/bin/my prog
55d0c6000000-55d0c6021000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0000001000 r-xp 00002000 fd:00 42                         /usr/lib/libold.so (deleted)
7f0000100000-7f0000101000 rw-p 00000000 00:00 0 
7ffd1e5f2000-7ffd1e5f4000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]

`
	got, err := ParseMaps(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{0x55d0c5a00000, 0x55d0c5a01000, 0, "r--p", "08:01", 1234, "/usr/bin/my prog"},
		{0x55d0c5a01000, 0x55d0c5a02000, 0x1000, "r-xp", "08:01", 1234, "/usr/bin/my prog"},
		{0x55d0c6000000, 0x55d0c6021000, 0, "rw-p", "00:00", 0, "[heap]"},
		{0x7f0000000000, 0x7f0000001000, 0x2000, "r-xp", "fd:00", 42, "/usr/lib/libold.so (deleted)"},
		{0x7f0000100000, 0x7f0000101000, 0, "rw-p", "00:00", 0, ""},
		{0x7ffd1e5f2000, 0x7ffd1e5f4000, 0, "r-xp", "00:00", 0, "[vdso]"},
		{0xffffffffff600000, 0xffffffffff601000, 0, "--xp", "00:00", 0, "[vsyscall]"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMaps =\n%+v\nwant\n%+v", got, want)
	}
	if !got[3].Deleted() || got[1].Deleted() || !got[1].Exec() || got[0].Exec() || got[2].FileBacked() {
		t.Errorf("Deleted/Exec/FileBacked wrong")
	}
	if paths := LoadedPaths(got); !reflect.DeepEqual(paths, []string{"/usr/bin/my prog"}) {
		t.Errorf("LoadedPaths = %q", paths)
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, line := range []string{
		"55d0c5a00000 r--p 00000000 08:01 1234 /x",
		"zz-55d0c5a01000 r--p 00000000 08:01 1234 /x",
		"1000-2000 r--p 0000000g 08:01 1234 /x",
		"1000-2000 r--p 00000000 08:01 inode /x",
		"1000-2000 r-- 00000000 08:01 1234 /x",
		"2000-1000 r--p 00000000 08:01 1234 /x",
		"1000-2000",
	} {
		if _, err := ParseMaps(strings.NewReader(line + "\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseMaps(%q) = %v, want an error naming line 1", line, err)
		}
	}
}

func TestLoadedPathsOrder(t *testing.T) {
	maps := []Mapping{
		{Perms: "r-xp", Path: "/bin/prog"},
		{Perms: "r--p", Path: "/lib/libdata.so"}, // not executable
		{Perms: "r-xp", Path: "/lib/libc.so.6"},
		{Perms: "r-xp", Path: "/bin/prog"}, // repeated
		{Perms: "r-xp", Path: "[vdso]"},
		{Perms: "r-xp", Path: ""},
		{Perms: "r-xp", Path: "/lib64/ld-linux-x86-64.so.2"},
	}
	want := []string{"/bin/prog", "/lib/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if got := LoadedPaths(maps); !reflect.DeepEqual(got, want) {
		t.Errorf("LoadedPaths = %q, want %q", got, want)
	}
}

func TestBiasSynthetic(t *testing.T) {
	m := &Module{Path: "/lib/libx.so", PIE: true, loads: []segment{
		{vaddr: 0, off: 0, filesz: 0x800, flags: 4},
		{vaddr: 0x1000, off: 0x1000, filesz: 0x2345, flags: 5},
		{vaddr: 0x4d10, off: 0x3d10, filesz: 0x100, flags: 6},
	}}
	maps := []Mapping{
		{Start: 0x7f0000000000, End: 0x7f0000001000, Offset: 0, Perms: "r--p", Path: "/lib/libx.so"},
		{Start: 0x7f0000001000, End: 0x7f0000004000, Offset: 0x1000, Perms: "r-xp", Path: "/lib/libx.so"},
		{Start: 0x7f0000004000, End: 0x7f0000005000, Offset: 0x3000, Perms: "rw-p", Path: "/lib/libx.so"},
	}
	if b, err := m.Bias(maps); err != nil || b != 0x7f0000000000 {
		t.Errorf("Bias = %#x, %v", b, err)
	}
	// Only the data mapping is left: the bias still follows.
	if b, err := m.Bias(maps[2:]); err != nil || b != 0x7f0000000000 {
		t.Errorf("Bias(data only) = %#x, %v", b, err)
	}
	if _, err := m.Bias(maps[:0]); err == nil {
		t.Errorf("Bias of an unmapped module succeeded")
	}
	exe := &Module{Path: "/bin/x", PIE: false}
	if b, err := exe.Bias(nil); err != nil || b != 0 {
		t.Errorf("non-PIE Bias = %#x, %v", b, err)
	}
}

// TestBiasLive starts calls.c, which prints the runtime addresses of main
// and usleep, and checks that Bias and Lookup map them back to the symbols.
func TestBiasLive(t *testing.T) {
	for _, v := range []struct {
		name  string
		flags []string
	}{{"pie", nil}, {"nopie", []string{"-no-pie"}}} {
		t.Run(v.name, func(t *testing.T) {
			path := buildC(t, "calls.c", v.flags...)
			cmd := exec.Command(path, "wait")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				stdin.Close()
				if err := cmd.Wait(); err != nil {
					t.Errorf("calls: %v", err)
				}
			}()
			var mainAddr, usleepAddr uint64
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Sscanf(line, "main=%v usleep=%v", &mainAddr, &usleepAddr); err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			maps, err := ReadMaps(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			exe, err := MainPath(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			paths := LoadedPaths(maps)
			if len(paths) < 3 || paths[0] != exe {
				t.Fatalf("LoadedPaths = %q, want the executable %q first, then libc and ld.so", paths, exe)
			}
			found := map[string]bool{}
			for _, p := range paths {
				m := openModule(t, p)
				bias, err := m.Bias(maps)
				if err != nil {
					t.Fatal(err)
				}
				if !m.PIE && bias != 0 {
					t.Errorf("%s: ET_EXEC with bias %#x", p, bias)
				}
				for _, want := range []struct {
					addr uint64
					name string
				}{{mainAddr, "main"}, {usleepAddr, "usleep"}} {
					if s, ok := m.Lookup(want.addr - bias); ok && s.Name == want.name && s.Value == want.addr-bias {
						found[want.name] = true
					}
				}
			}
			if !found["main"] || !found["usleep"] {
				t.Errorf("found %v; want main and usleep at their runtime addresses", found)
			}
		})
	}
}

// TestBiasResolvedPath opens libc by a symlinked path: the maps name the
// resolved path, and Bias must still recognise the file.
func TestBiasResolvedPath(t *testing.T) {
	if _, err := os.Stat(libcPath); err != nil {
		t.Skip("no", libcPath)
	}
	link := filepath.Join(t.TempDir(), "libc-link.so.6")
	if err := os.Symlink(libcPath, link); err != nil {
		t.Fatal(err)
	}
	m := openModule(t, link)
	maps, err := ReadMaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(libcPath)
	if err != nil {
		t.Fatal(err)
	}
	// The test binary may not link libc; fake a mapping of it.
	maps = append(maps, Mapping{Start: 0x7f1234560000, End: 0x7f1234700000, Offset: 0x26000, Perms: "r-xp", Path: real})
	for _, seg := range m.loads {
		if seg.flags&4 != 0 && seg.flags&1 != 0 {
			maps[len(maps)-1].Offset = seg.off &^ (pageSize - 1)
		}
	}
	if _, err := m.Bias(maps); err != nil {
		t.Errorf("Bias via resolved path: %v", err)
	}
}
