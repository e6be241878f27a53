package fsaudit

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kind tells what a trace line holds.
type Kind int

// The kinds of Event.
const (
	// Call is a system call seen whole: on one line, or an
	// "<unfinished ...>" line joined with its "<... resumed>" one.
	Call Kind = iota
	// Entry is the "<unfinished ...>" line of a call whose end another
	// thread's lines interrupt; its Call event comes with the resumed line.
	Entry
	// Exit is "+++ exited with N +++": Status holds N.
	Exit
)

// Event is one parsed line of an strace -f -y output.
type Event struct {
	Kind  Kind
	Line  int // the line it ends on (a resumed call: the resumed line)
	Start int // the line it started on (Line unless it was unfinished)
	PID   int
	Name  string   // the system call
	Args  []string // its arguments as strace printed them
	Ret   string   // what follows " = " ("" for an Entry)
	// Status is the exit status of an Exit.
	Status int
	head   string // an Entry's text, which its resumed line goes on from
}

// Failed reports whether the call returned an error (or never returned).
func (e *Event) Failed() bool {
	return e.Ret == "" || strings.HasPrefix(e.Ret, "-") || strings.HasPrefix(e.Ret, "?")
}

// RetInt is the call's return value as an integer (0 when it is none).
func (e *Event) RetInt() int64 {
	n, _, _ := fdArg(e.Ret)
	return n
}

// Parse reads an strace output (-f, -y, with or without -tt) line by line
// and calls fn with each call, entry and exit it holds; other lines
// (signals, strace's own messages) are skipped. A call split by
// "<unfinished ...>" is joined with its "<... NAME resumed>" line. An
// error from fn stops the parse and is returned.
func Parse(r io.Reader, fn func(*Event) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	open := map[int]*Event{} // unfinished call per thread
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("fsaudit: reading the trace at line %d: %w", n, err)
		}
		ev := parseLine(strings.TrimRight(line, "\r\n"), n, open)
		if ev != nil {
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
}

// parseLine parses line n; open holds the unfinished call of each thread.
// It returns nil for a line that is no event.
func parseLine(line string, n int, open map[int]*Event) *Event {
	pid, rest := leadingPID(line)
	rest = skipTimestamp(rest)
	switch {
	case strings.HasPrefix(rest, "+++ exited with "):
		s, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rest, "+++ exited with "), " +++"))
		return &Event{Kind: Exit, Line: n, Start: n, PID: pid, Status: s}
	case strings.HasPrefix(rest, "<... "):
		// "<... NAME resumed>REST": REST goes on from where the
		// unfinished line stopped.
		i := strings.Index(rest[len("<... "):], " resumed>")
		if i < 0 {
			return nil
		}
		i += len("<... ")
		name := rest[len("<... "):i]
		prev := open[pid]
		delete(open, pid)
		if prev == nil || prev.Name != name {
			return nil
		}
		ev := parseCall(prev.head+rest[i+len(" resumed>"):], n)
		if ev == nil {
			return nil
		}
		ev.Start, ev.PID = prev.Start, pid
		return ev
	}
	if i := strings.LastIndex(rest, " <unfinished ...>"); i >= 0 {
		head := rest[:i]
		p := strings.IndexByte(head, '(')
		if p <= 0 || !isName(head[:p]) {
			return nil
		}
		args, _, _ := splitArgs(head[p+1:])
		ev := &Event{Kind: Entry, Line: n, Start: n, PID: pid, Name: head[:p], Args: args, head: head}
		open[pid] = ev
		return ev
	}
	ev := parseCall(rest, n)
	if ev != nil {
		ev.PID = pid
	}
	return ev
}

// leadingPID splits "1234  rest" or "[pid  1234] rest"; a line of a
// trace of one process has no pid (0).
func leadingPID(line string) (int, string) {
	s := line
	if strings.HasPrefix(s, "[pid ") {
		s = strings.TrimLeft(s[len("[pid "):], " ")
		if i := strings.IndexByte(s, ']'); i > 0 {
			if p, err := strconv.Atoi(s[:i]); err == nil {
				return p, strings.TrimLeft(s[i+1:], " ")
			}
		}
		return 0, line
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[i] != ' ' {
		return 0, line
	}
	p, err := strconv.Atoi(s[:i])
	if err != nil {
		return 0, line
	}
	return p, strings.TrimLeft(s[i:], " ")
}

// skipTimestamp drops a leading -t, -tt or -ttt time stamp.
func skipTimestamp(s string) string {
	i := strings.IndexByte(s, ' ')
	if i <= 0 {
		return s
	}
	for _, c := range []byte(s[:i]) {
		if (c < '0' || c > '9') && c != ':' && c != '.' {
			return s
		}
	}
	if !strings.ContainsAny(s[:i], ":.") {
		return s
	}
	return strings.TrimLeft(s[i:], " ")
}

func isName(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// parseCall parses "NAME(ARGS) = RET" at line n.
func parseCall(s string, n int) *Event {
	p := strings.IndexByte(s, '(')
	if p <= 0 || !isName(s[:p]) {
		return nil
	}
	args, end, ok := splitArgs(s[p+1:])
	if !ok {
		return nil
	}
	tail := strings.TrimLeft(s[p+1+end:], " ")
	ret, found := strings.CutPrefix(tail, "= ")
	if !found {
		return nil
	}
	return &Event{Kind: Call, Line: n, Start: n, Name: s[:p], Args: args, Ret: ret}
}

// splitArgs splits the arguments of a call at its top-level commas, up
// to the closing parenthesis, minding strings, brackets, braces and -y's
// <path> annotations. end is the index just past that parenthesis; ok is
// false when there is none (the arguments of an unfinished line).
func splitArgs(s string) (args []string, end int, ok bool) {
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			i = skipQuoted(s, i+1, '"')
		case '<':
			if i > 0 && (isWord(s[i-1]) || s[i-1] == ']') {
				i = annotEnd(s, i+1)
			}
		case '(', '[', '{':
			depth++
		case ']', '}':
			depth--
		case ')':
			if depth == 0 {
				if a := strings.TrimSpace(s[start:i]); a != "" || len(args) > 0 {
					args = append(args, a)
				}
				return args, i + 1, true
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if a := strings.TrimSpace(s[start:]); a != "" {
		args = append(args, a)
	}
	return args, len(s), false
}

func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
}

// skipQuoted returns the index of the unescaped close byte at or after i
// (len(s)-1 when there is none).
func skipQuoted(s string, i int, close byte) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case close:
			return i
		}
	}
	return len(s) - 1
}

// annotEnd returns the index of the '>' that closes the -y annotation
// starting at i (just past its '<'). A path escapes a '>' in it, but
// -yy's socket annotations hold a bare one inside their brackets
// ("TCP:[127.0.0.1:52376->127.0.0.1:6881]"): in an annotation that is no
// path, a '>' closes it only outside brackets.
func annotEnd(s string, i int) int {
	if i >= len(s) || s[i] == '/' {
		return skipQuoted(s, i, '>')
	}
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			depth++
		case ']':
			depth--
		case '>':
			if depth <= 0 {
				return i
			}
		}
	}
	return len(s) - 1
}

// strArg decodes a quoted string argument: its bytes, and whether strace
// cut it short ("..." after the quote, -s).
func strArg(a string) (b []byte, truncated, ok bool) {
	if len(a) < 2 || a[0] != '"' {
		return nil, false, false
	}
	end := skipQuoted(a, 1, '"')
	if end >= len(a) || a[end] != '"' {
		return nil, false, false
	}
	return unescape(a[1:end]), strings.HasPrefix(a[end+1:], "..."), true
}

// fdArg decodes "5</path>" (or "AT_FDCWD</cwd>", as -1): the number and
// the path strace found for it ("" without -y).
func fdArg(a string) (n int64, path string, ok bool) {
	num := a
	if i := strings.IndexByte(a, '<'); i >= 0 {
		num = a[:i]
		if j := annotEnd(a, i+1); j > i && j < len(a) && a[j] == '>' {
			path = string(unescape(a[i+1 : j]))
		}
	}
	if num == "AT_FDCWD" {
		return -100, path, true
	}
	if sp := strings.IndexByte(num, ' '); sp >= 0 {
		num = num[:sp]
	}
	v, err := strconv.ParseInt(num, 0, 64)
	return v, path, err == nil
}

// unescape undoes strace's quoting: \n \t \r \v \f \" \\, \xHH and octal.
func unescape(s string) []byte {
	if strings.IndexByte(s, '\\') < 0 {
		return []byte(s)
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'v':
			out = append(out, '\v')
		case 'f':
			out = append(out, '\f')
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			out = append(out, byte(v))
			i = j - 1
		default:
			if c >= '0' && c <= '7' {
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i:j], 8, 16)
				out = append(out, byte(v))
				i = j - 1
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
