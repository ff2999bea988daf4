package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A node's data is bytes, often text, sometimes not. get writes them as
// they are to a pipe or a file, and safely to a terminal: data that is not
// UTF-8 as a hex dump, and text with control or invisible characters (an
// escape sequence, a lone carriage return, a right-to-left override) with
// those characters escaped, so that what the terminal shows is what the
// node holds.

// dataForm is how a node's data is shown on a terminal.
type dataForm int

const (
	formText    dataForm = iota // printable UTF-8 text: as it is
	formEscaped                 // UTF-8 with control or invisible characters: those escaped
	formHex                     // not UTF-8: a hex dump
)

// formOf tells how data is shown on a terminal.
func formOf(data []byte) dataForm {
	if !utf8.Valid(data) {
		return formHex
	}
	for text := string(data); text != ""; {
		r, n := utf8.DecodeRuneInString(text)
		text = text[n:]
		if !safeRune(r, text) {
			return formEscaped
		}
	}
	return formText
}

// safeRune reports whether r, followed by rest, shows on a terminal as
// itself: a graphic character, a newline, a tab, or a carriage return that
// ends a line (CRLF).
func safeRune(r rune, rest string) bool {
	switch r {
	case '\n', '\t':
		return true
	case '\r':
		return strings.HasPrefix(rest, "\n")
	}
	return unicode.IsGraphic(r)
}

// escapeText returns text with every character that does not show as
// itself written as in Go ("\x1b", "\r", "\u202e"), and backslashes
// doubled, so that the result reads back unambiguously. Newlines and tabs
// stay. Bytes that are not UTF-8 are escaped too ("\xff").
func escapeText(text string) string {
	var b strings.Builder
	for text != "" {
		r, n := utf8.DecodeRuneInString(text)
		c := text[:n]
		text = text[n:]
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, c[0])
		case r == '\\':
			b.WriteString(`\\`)
		case safeRune(r, text):
			b.WriteString(c)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// showData writes data for a person reading a terminal, as formOf says,
// ending with a newline; notes (on stderr) says how to read what was
// written, unless it is plain text.
func showData(out, notes io.Writer, data []byte) {
	switch formOf(data) {
	case formHex:
		fmt.Fprintf(notes, "zkcoord: %d bytes that are not UTF-8 text, shown as a hex dump; --raw writes them as they are\n", len(data))
		fmt.Fprint(out, hex.Dump(data))
		return
	case formEscaped:
		fmt.Fprintln(notes, `zkcoord: control and invisible characters are shown escaped, \\ is a backslash; --raw writes the data as it is`)
		data = []byte(escapeText(string(data)))
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	out.Write(data)
}

// jsonData is how --json carries a node's data: as a string if it is
// UTF-8 ("utf-8"), else in base64 ("base64").
func jsonData(data []byte) (text, encoding string) {
	if utf8.Valid(data) {
		return string(data), "utf-8"
	}
	return base64.StdEncoding.EncodeToString(data), "base64"
}

// maxInput bounds the data read from standard input: ZooKeeper refuses
// nodes of 1 MiB and more.
const maxInput = 1 << 20

// dataArg returns the data of set and create: arg itself, or, for "-",
// everything on in (standard input), as it is.
func dataArg(arg string, in io.Reader) ([]byte, error) {
	if arg != "-" {
		return []byte(arg), nil
	}
	data, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the data from standard input: %w", err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("more than %d bytes on standard input: larger than ZooKeeper lets a node hold", maxInput)
	}
	return data, nil
}

// shownName returns a name (of a node, a user, an ACL entry) as the
// listings print it: on a terminal (term), a name with characters that
// would not show as themselves is escaped as escapeText does; elsewhere it
// is left as it is, for scripts.
func shownName(name string, term bool) string {
	if term && formOf([]byte(name)) != formText {
		return escapeText(name)
	}
	return name
}
