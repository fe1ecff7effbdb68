package names

import "strings"

// elided stands for a template or generic argument list.
const elided = "<…>"

// specialPrefixes name functions that are not the function they mention (a
// thunk adjusts this and jumps); they are kept so the two stay apart. The
// list is the demangler's (github.com/ianlancetaylor/demangle, specialName).
var specialPrefixes = []string{
	"non-virtual thunk to ",
	"virtual thunk to ",
	"covariant return thunk to ",
	"TLS init function for ",
	"TLS wrapper function for ",
	"non-transaction clone for ",
	"transaction clone for ",
	"hidden alias for ",
	"guard variable for ",
	"invocation function for block in ",
}

// Short returns the demangled C++ or Rust function name shortened for tables
// and graph labels (see the package doc). It never fails: any string is a
// name, and Short(Short(x)) == Short(x).
func Short(name string) string {
	if len(name) > maxLen || nesting(name) > maxDepth {
		return name
	}
	for _, p := range specialPrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			return p + Short(rest)
		}
	}
	if plain(name) {
		return name
	}
	s := scan(name, modeDecl)
	for {
		cut, ok := cutRustHash(s)
		if !ok {
			break
		}
		s = cut
	}
	if s == "" {
		return name
	}
	return s
}

// No real symbol comes near these; past them Short leaves a name alone, as
// its time grows with length times nesting depth.
const (
	maxLen   = 1 << 16
	maxDepth = 256
)

// nesting returns the deepest nesting of brackets in s, counted naively.
func nesting(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{', '<':
			depth++
			deepest = max(deepest, depth)
		case ')', ']', '}', '>':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// mode says how scan reads its text.
type mode int

const (
	// modeDecl reads a function's full name: a return type before the
	// last top-level space is dropped, and the parameter list ends the
	// name unless "::" follows (a local entity such as a lambda).
	modeDecl mode = iota
	// modeType reads a type or path inside a Rust qualified path, a
	// conversion operator or brackets: spaces and parentheses are kept,
	// and there are no operator names to read.
	modeType
	// modeBrace reads the inside of {...} (a lambda, closure or unnamed
	// type): parameter lists are dropped, "lambda(int)#1" -> "lambda#1";
	// no operator names either.
	modeBrace
)

// scan shortens s read in mode m. Every bracket it opens is found with
// closing, so an unbalanced input elides or copies the rest of the string
// and the output, read again, gives itself.
func scan(s string, m mode) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 'o' && m == modeDecl && isOperator(s, i):
			tok, n := operatorToken(s, i)
			b.WriteString(tok)
			i += n
		case c == '<':
			end := closing(s, i)
			inner := s[i+1 : end]
			prev := lastByte(&b)
			switch {
			case end < len(s) && isIdent(prev) && literalArgs(inner):
				// Kept: short and what tells instances apart
				// ("Leaf<0, 1>", "get<2>").
				b.WriteString(s[i : end+1])
			case end == len(s) || isIdent(prev) || strings.IndexByte(">)]}", prev) >= 0 ||
				(prev == ':' && !isQualifiedPath(inner)):
				b.WriteString(elided)
			default:
				// A Rust qualified path: "<Foo as Trait>",
				// "<impl Trait for Foo>", "<alloc::vec::Vec<u8>>".
				b.WriteByte('<')
				b.WriteString(scan(inner, modeType))
				b.WriteByte('>')
			}
			i = next(s, end)
		case c == '(':
			end := closing(s, i)
			inner := s[i+1 : end]
			switch {
			case strings.HasPrefix(s[i:], "(anonymous namespace)"):
				b.WriteString("(anonymous namespace)")
			case m == modeBrace:
				// A lambda's parameter list: "lambda(int)#1".
			case m == modeType:
				b.WriteByte('(')
				b.WriteString(scan(inner, modeType))
				b.WriteByte(')')
			case lastByte(&b) == '.':
				// A Go method's receiver: "runtime.(*mheap).alloc".
				b.WriteString(s[i:next(s, end)])
			case b.Len() == 0 && inner != "" && (inner[0] == '*' || inner[0] == '&'):
				// A template function returning a function pointer:
				// "void (*f<int>(int))(int)"; the name is inside.
				return scan(strings.TrimLeft(inner, "*&"), modeDecl)
			case b.Len() == 0:
				// Part of a return type, such as "decltype (...)".
			default:
				// The parameter list: what follows is qualifiers
				// (" const", " &&", " [clone .cold]") unless the
				// name goes on to a local entity.
				i = next(s, end)
				if !strings.HasPrefix(s[i:], "::") {
					return b.String()
				}
				continue
			}
			i = next(s, end)
		case c == '{':
			end := closing(s, i)
			b.WriteByte('{')
			b.WriteString(scan(s[i+1:end], modeBrace))
			b.WriteByte('}')
			i = next(s, end)
		case c == '[':
			end := closing(s, i)
			inner := s[i+1 : end]
			tag := strings.HasPrefix(inner, "abi:") || strings.HasPrefix(inner, "clone ")
			if !tag || !endsName(s, next(s, end)) {
				b.WriteByte('[')
				b.WriteString(scan(inner, modeType))
				b.WriteByte(']')
			}
			i = next(s, end)
		case c == ' ' && m == modeDecl:
			if strings.HasPrefix(s[i+1:], "[clone ") {
				return b.String()
			}
			// What came before was the return type.
			b.Reset()
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// literalArgs reports whether a template argument list holds only a few
// integer or boolean literals ("0, 1", "3ul", "-1", "true"): those read as
// short as the elision and tell the instances of a template apart.
func literalArgs(inner string) bool {
	if inner == "" || len(inner) > 24 {
		return false
	}
	for _, a := range strings.Split(inner, ",") {
		a = strings.TrimSpace(a)
		if a == "true" || a == "false" {
			continue
		}
		a = strings.TrimPrefix(a, "-")
		a = strings.TrimRight(a, "ulUL")
		if a == "" || strings.Trim(a, "0123456789") != "" {
			return false
		}
	}
	return true
}

// endsName reports whether s[i:] goes on with what may follow a name (its
// parameters, a scope, another tag, the end), where dropping a tag before
// it joins no words.
func endsName(s string, i int) bool {
	return i == len(s) || strings.IndexByte("(:[ ", s[i]) >= 0
}

// next returns the index after the closer at end, which is len(s) when the
// opener was never closed.
func next(s string, end int) int {
	return min(end+1, len(s))
}

// closing returns the index of the bracket closing the one at s[i], or
// len(s) if there is none. Inside parentheses, square brackets and braces
// '<' and '>' are not brackets ("(1>2)", "{lambda(std::map<int, int>)#1}");
// neither is the '>' of "->"; a closer that does not match is ignored.
// Operator names inside template arguments ("<&S::operator<>") are not
// told apart: no real symbol was seen to have one, and scan reads them
// the same way.
func closing(s string, i int) int {
	stack := make([]byte, 0, 8)
	for j := i; j < len(s); j++ {
		c := s[j]
		top := byte('>')
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch c {
		case '(':
			stack = append(stack, ')')
		case '[':
			stack = append(stack, ']')
		case '{':
			stack = append(stack, '}')
		case '<':
			if top == '>' {
				stack = append(stack, '>')
			}
		default:
			if c != top || (c == '>' && j > 0 && s[j-1] == '-') {
				continue
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return j
		}
	}
	return len(s)
}

// plain reports whether name is not a demangled C++ or Rust name, but a C
// or Go one, to be left alone. Those never have "::"; a Go name has a '.'
// or '/' before any bracket ("runtime.(*mheap).alloc",
// "slices.Sort[go.shape.interface { Len() int }]", "runtime/cgo(.text)").
// A C++ name without "::" has template arguments or a parameter list.
func plain(name string) bool {
	if strings.Contains(name, "::") {
		return false
	}
	head := name
	if i := strings.IndexAny(name, "(<[{ "); i >= 0 {
		head = name[:i]
	}
	if strings.ContainsAny(head, "./") {
		return true
	}
	return !strings.Contains(name, "<") && !hasParams(name)
}

// hasParams reports whether s has a '(' right after an identifier or a
// closing bracket: a C++ parameter list, not a Go section symbol such as
// "net(.text)".
func hasParams(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] == '(' && (isIdent(s[i-1]) || strings.IndexByte(">)]}", s[i-1]) >= 0) &&
			!(i+2 < len(s) && s[i+1] == '.' && isIdent(s[i+2])) {
			return true
		}
	}
	return false
}

// isQualifiedPath tells a Rust qualified path after "::" ("<impl u64>",
// "<T as Trait>") from generic arguments ("::<u64>").
func isQualifiedPath(inner string) bool {
	if strings.HasPrefix(inner, "impl ") {
		return true
	}
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '<', '(', '[', '{':
			i = closing(inner, i)
		case ' ':
			if strings.HasPrefix(inner[i:], " as ") {
				return true
			}
		}
	}
	return false
}

// cutRustHash removes the "::h" and 16 hex digits that end a Rust legacy
// symbol demangled by tools that keep it (c++filt, rustc-demangle).
func cutRustHash(s string) (string, bool) {
	const n = len("::h") + 16
	if len(s) < n || !strings.HasPrefix(s[len(s)-n:], "::h") {
		return s, false
	}
	for i := len(s) - 16; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return s, false
		}
	}
	return s[:len(s)-n], true
}

func lastByte(b *strings.Builder) byte {
	s := b.String()
	if s == "" {
		return 0
	}
	return s[len(s)-1]
}

// isIdent reports whether c can be part of an identifier; the bytes of
// UTF-8 sequences count, as Rust allows Unicode identifiers.
func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
