package main

import (
	"errors"
	"fmt"
	"strings"
)

// shellMeta are the characters that make a command template need a shell.
const shellMeta = "|&;<>()$`\\\"'*?[]#~=%!{}\n"

// commandTemplate is a command line with {placeholders}, such as
// "consume --queue {resource}".
type commandTemplate struct {
	text  string
	shell bool     // run with sh -c; text refers to placeholders by variable
	words []string // without a shell: the words, placeholders unexpanded
}

// parseTemplate prepares a command template. Without shell syntax (once the
// placeholders are removed) the command is split into words and run
// directly, each placeholder expanding to exactly one argument piece. With
// shell syntax it runs under /bin/sh -c, and a placeholder never becomes
// shell text: {name} turns into a reference to the environment variable
// ZKCOORD_NAME, which the child gets, quoted so that the value is one word
// whatever it holds. A placeholder inside single quotes cannot be expanded
// that way and is refused.
func parseTemplate(text string, placeholders ...string) (commandTemplate, error) {
	if strings.TrimSpace(text) == "" {
		return commandTemplate{}, errors.New("empty command")
	}
	bare := text
	for _, p := range placeholders {
		bare = strings.ReplaceAll(bare, "{"+p+"}", "x")
	}
	if !strings.ContainsAny(bare, shellMeta) {
		return commandTemplate{text: text, words: strings.Fields(text)}, nil
	}
	script, err := shellScript(text, placeholders)
	if err != nil {
		return commandTemplate{}, err
	}
	return commandTemplate{text: script, shell: true}, nil
}

// shellScript replaces each placeholder in a shell command line by a quoted
// reference to its environment variable, following the quoting of the
// command line: "$ZKCOORD_X" outside quotes, $ZKCOORD_X inside double
// quotes.
func shellScript(text string, placeholders []string) (string, error) {
	var out strings.Builder
	single, double := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !single && c == '\\' && i+1 < len(text) {
			out.WriteString(text[i : i+2])
			i++
			continue
		}
		if c == '{' {
			if name, ok := placeholderAt(text[i:], placeholders); ok {
				v := "$" + placeholderVar(name)
				switch {
				case single:
					return "", fmt.Errorf("{%s} inside single quotes: use double quotes or none", name)
				case double:
					out.WriteString(v)
				default:
					out.WriteString(`"` + v + `"`)
				}
				i += len(name) + 1
				continue
			}
		}
		switch {
		case c == '\'' && !double:
			single = !single
		case c == '"' && !single:
			double = !double
		}
		out.WriteByte(c)
	}
	return out.String(), nil
}

// placeholderAt returns the placeholder s starts with, if any.
func placeholderAt(s string, placeholders []string) (string, bool) {
	for _, p := range placeholders {
		if strings.HasPrefix(s, "{"+p+"}") {
			return p, true
		}
	}
	return "", false
}

// placeholderVar is the environment variable that carries a placeholder's
// value to a shell command: ZKCOORD_RESOURCE for {resource}.
func placeholderVar(name string) string { return "ZKCOORD_" + strings.ToUpper(name) }

// argv expands the template with values (placeholder name -> value). A
// shell command gets the values from its environment (placeholderVar),
// which the caller sets.
func (t commandTemplate) argv(values map[string]string) []string {
	if t.shell {
		return []string{"/bin/sh", "-c", t.text}
	}
	out := make([]string, len(t.words))
	for i, w := range t.words {
		for k, v := range values {
			w = strings.ReplaceAll(w, "{"+k+"}", v)
		}
		out[i] = w
	}
	return out
}

// expandArgs replaces placeholders in a command given as separate arguments
// (after "--"); no shell is involved.
func expandArgs(args []string, values map[string]string) []string {
	out := make([]string, len(args))
	for i, w := range args {
		for k, v := range values {
			w = strings.ReplaceAll(w, "{"+k+"}", v)
		}
		out[i] = w
	}
	return out
}
