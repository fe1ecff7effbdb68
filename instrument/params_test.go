package instrument

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The parameter registers of functions compiled here with debug
// information: integers and pointers take one, doubles none, a 16-byte
// struct two, a larger one none (stack), C++ names by linkage name.
func TestParamRegs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.cpp")
	code := `
struct Pair { long a, b; };
struct Big { long a, b, c; };
extern "C" {
__attribute__((noinline)) int none(void) { return 0; }
__attribute__((noinline)) int three(int a, long b, const char *c) { return a + b + (c != 0); }
__attribute__((noinline)) int mixed(double x, int y, float z) { return y + (int)(x + z); }
__attribute__((noinline)) long pair(struct Pair p, int z) { return p.a + p.b + z; }
__attribute__((noinline)) long big(struct Big b, int z) { return b.a + z; }
__attribute__((noinline)) long eight(long a, long b, long c, long d, long e, long f, long g, long h) { return a+b+c+d+e+f+g+h; }
}
struct K { int v; __attribute__((noinline)) int get(int x) const; };
int K::get(int x) const { return v + x; }
int main() { struct Pair p = {1, 2}; struct Big b = {1, 2, 3}; K k{1};
  return none() + three(1, 2, "x") + mixed(1, 2, 3) + (int)pair(p, 1) + (int)big(b, 1) + (int)eight(1,2,3,4,5,6,7,8) + k.get(1); }
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "p")
	if out, err := exec.Command("g++", "-g", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	got, err := ParamRegs(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"none": 0, "three": 3, "mixed": 1, "pair": 3, "big": 1, "eight": 6, "_ZNK1K3getEi": 2, "main": 0}
	for name, n := range want {
		if g, ok := got[name]; !ok || g != n {
			t.Errorf("%s: %d registers (found %v), want %d", name, g, ok, n)
		}
	}
	// Without debug information: nothing known, no error.
	stripped := filepath.Join(dir, "s")
	if out, err := exec.Command("g++", "-O1", "-o", stripped, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	if got, err := ParamRegs(stripped); err != nil || len(got) != 0 {
		t.Errorf("no debug information: %v, %v; want an empty map", got, err)
	}
}
