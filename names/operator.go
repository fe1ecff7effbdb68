package names

import "strings"

// symbolicOperators are the C++ operator names made of punctuation, longest
// first so that "operator<<=" is not read as "operator<" and "<=".
var symbolicOperators = []string{
	"->*", "<=>", "<<=", ">>=",
	"()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", `""`,
	"+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
}

// wordOperators follow "operator " and are not conversions.
var wordOperators = []string{"new[]", "delete[]", "new", "delete", "co_await", `""`}

// isOperator reports whether the keyword "operator" starts at s[i].
func isOperator(s string, i int) bool {
	const kw = "operator"
	if !strings.HasPrefix(s[i:], kw) || i > 0 && isIdent(s[i-1]) {
		return false
	}
	return i+len(kw) == len(s) || !isIdent(s[i+len(kw)])
}

// symbolicOperator returns the operator punctuation s starts with, or "".
func symbolicOperator(s string) string {
	for _, op := range symbolicOperators {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// operatorToken reads the operator name at s[i] (where isOperator holds)
// and returns it shortened with the number of bytes it took: symbolic
// operators ("operator<<", "operator()") and word ones ("operator new[]")
// as they are, a conversion's type shortened ("operator std::basic_string<…>"),
// the template arguments of a symbolic operator elided ("operator< <…>").
func operatorToken(s string, i int) (string, int) {
	j := i + len("operator")
	if op := symbolicOperator(s[j:]); op != "" {
		j += len(op)
		tok := "operator" + op
		if op == `""` {
			suffix := literalSuffix(s[j:])
			tok += suffix
			j += len(suffix)
		}
		// The demangler separates template arguments with a space
		// after an operator ending in '<' ("operator< <char>").
		if strings.HasPrefix(s[j:], " <") {
			tok += " "
			j++
		}
		if strings.HasPrefix(s[j:], "<") {
			tok += elided
			j = next(s, closing(s, j))
		}
		return tok, j - i
	}
	if !strings.HasPrefix(s[j:], " ") {
		return "operator", j - i
	}
	rest := s[j+1:]
	for _, w := range wordOperators {
		if strings.HasPrefix(rest, w) && (len(rest) == len(w) || !isIdent(rest[len(w)]) || w == `""`) {
			tok := "operator " + w
			n := len("operator ") + len(w)
			if w == `""` {
				suffix := literalSuffix(rest[len(w):])
				tok += suffix
				n += len(suffix)
			}
			return tok, n
		}
	}
	// A conversion operator: its type runs up to the parameter list,
	// past the declarator of a function pointer ("operator int (*)(int)").
	end := 0
	for end < len(rest) {
		c := rest[end]
		if strings.HasPrefix(rest[end:], "(anonymous namespace)") {
			end += len("(anonymous namespace)")
			continue
		}
		if c == '(' && !strings.HasPrefix(rest[end:], "(*") && !strings.HasPrefix(rest[end:], "(&") {
			break
		}
		if strings.IndexByte("<[{(", c) < 0 {
			end++
			continue
		}
		end = next(rest, closing(rest, end))
		if c == '(' && strings.HasPrefix(rest[end:], "(") {
			end = next(rest, closing(rest, end)) // the pointed-to function's parameters
		}
	}
	typ := strings.TrimRight(scan(rest[:end], modeType), " ")
	if typ == "" {
		return "operator", len("operator")
	}
	return "operator " + typ, len("operator ") + end
}

// literalSuffix returns the suffix of a literal operator ("operator\"\" _km"):
// an optional space and an identifier.
func literalSuffix(s string) string {
	n := 0
	if strings.HasPrefix(s, " ") {
		n = 1
	}
	k := n
	for k < len(s) && isIdent(s[k]) {
		k++
	}
	if k == n {
		return ""
	}
	return s[:k]
}
