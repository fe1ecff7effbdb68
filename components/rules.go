package components

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"

	"gopkg.in/yaml.v3"
)

// Rules name the components by their entry functions (docs/components.md),
// in a YAML document:
//
//	components:
//	  - name: parser
//	    entry: ['^parse_', '^lex'] # regexes on the function's name (or one regex)
//	  - name: libc
//	    module: '^libc\.so'        # a regex on the module's name
//
// A function is an entry function of the first component, in file order,
// whose entry regexes (any of them) match its name and whose module regex,
// if given, matches its module's name (the base name, as summary shows
// it). A component without entry regexes has every function of its modules
// as entry functions. Regexes are Go's (RE2), unanchored.
type Rules struct {
	comps []rule
}

type rule struct {
	name   string
	entry  []*regexp.Regexp
	module *regexp.Regexp
}

// rulesFile is the YAML document.
type rulesFile struct {
	Components []struct {
		Name   string   `yaml:"name"`
		Entry  patterns `yaml:"entry"`
		Module string   `yaml:"module"`
	} `yaml:"components"`
}

// patterns is a list of regexes, or one regex alone.
type patterns []string

func (p *patterns) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*p = patterns{n.Value}
		return nil
	}
	return n.Decode((*[]string)(p))
}

// ParseRules reads a rules document; name (the file's) prefixes errors.
func ParseRules(name string, data []byte) (*Rules, error) {
	var doc rulesFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no components", name)
		}
		return nil, fmt.Errorf("%s: %w", name, oneLine(err))
	}
	if len(doc.Components) == 0 {
		return nil, fmt.Errorf("%s: no components", name)
	}
	r := &Rules{}
	seen := map[string]bool{}
	for i, c := range doc.Components {
		where := fmt.Sprintf("%s: component %d", name, i+1)
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("%s: no name", where)
		case c.Name == Start || c.Name == Other:
			return nil, fmt.Errorf("%s: the name %q is reserved", where, c.Name)
		case seen[c.Name]:
			return nil, fmt.Errorf("%s: a second component named %q", where, c.Name)
		case len(c.Entry) == 0 && c.Module == "":
			return nil, fmt.Errorf("%s (%s): neither entry nor module", where, c.Name)
		}
		seen[c.Name] = true
		ru := rule{name: c.Name}
		for _, e := range c.Entry {
			re, err := regexp.Compile(e)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): entry: %w", where, c.Name, err)
			}
			ru.entry = append(ru.entry, re)
		}
		if c.Module != "" {
			re, err := regexp.Compile(c.Module)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): module: %w", where, c.Name, err)
			}
			ru.module = re
		}
		r.comps = append(r.comps, ru)
	}
	return r, nil
}

// unknownField matches yaml.v3's report of a field the document has and
// the rules do not: "line 3: field entries not found in type struct {...}".
var unknownField = regexp.MustCompile(`^(line \d+: )field (\S+) not found in type .*$`)

// oneLine makes yaml.v3's decoding errors, one line per mistake naming Go
// types, one line for the user: the first mistake.
func oneLine(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return err
	}
	msg := unknownField.ReplaceAllString(te.Errors[0], "${1}unknown field $2")
	if len(te.Errors) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
	}
	return errors.New(msg)
}

// entryOf names the component whose entry function fn (of module) is, or
// "" when it is none's.
func (r *Rules) entryOf(fn, module string) string {
	for _, c := range r.comps {
		if c.module != nil && !c.module.MatchString(module) {
			continue
		}
		if len(c.entry) == 0 {
			return c.name
		}
		for _, re := range c.entry {
			if re.MatchString(fn) {
				return c.name
			}
		}
	}
	return ""
}
