// Command fsaudit checks an strace(1) trace of a dataset-writing step
// for a missing fsync: that a power cut at any instant of it leaves a
// dataset whose last durable commit is whole (see package fsaudit for
// the model and how to trace). scripts/fsaudit.sh (make fsaudit) runs
// it on each writer scenario.
//
//	fsaudit [-before PATH=COPY]... [-data DIR]... [-o FILE]... [-cache FILE]... [-mount DIR]... [-cwd DIR] TRACE
//	fsaudit -calls    # the system calls to trace: strace -e trace=$(fsaudit -calls)
//
// It prints each violation as "TRACE:LINE: CALL PATH: WHAT", a summary on
// stderr, and exits 1 if there was any (2: usage, or the trace cannot be
// read).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/infohash/infohash/tools/fsaudit"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fsaudit", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var before, data, outs, mounts, caches list
	fl.Var(&before, "before", "`PATH=COPY`: COPY holds the tree at PATH as it was when the trace began (repeatable)")
	fl.Var(&data, "data", "a dataset `DIR` to check (repeatable; a folder a CURRENT is renamed into is checked too)")
	fl.Var(&outs, "o", "an output `FILE` of the step: synced before its rename, durable at exit (repeatable)")
	fl.Var(&caches, "cache", "a `FILE` the step leaves for its next run, which starts cold without it: synced before its rename, never written in place (repeatable)")
	fl.Var(&mounts, "mount", "a mount point `DIR`: a syncfs covers only its own file system (repeatable)")
	cwd := fl.String("cwd", "", "the step's working `DIR` (default: from the trace's AT_FDCWD)")
	calls := fl.Bool("calls", false, "print the system calls to trace (strace -e trace=) and exit")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *calls {
		fmt.Fprintln(stdout, fsaudit.TraceCalls)
		return 0
	}
	if fl.NArg() != 1 {
		fmt.Fprintln(stderr, "fsaudit: one trace file, please (-h for help)")
		return 2
	}
	cfg := fsaudit.Config{Cwd: *cwd, Datasets: data, Outputs: outs, Caches: caches, Mounts: mounts, Before: map[string]string{}}
	for _, b := range before {
		p, c, ok := strings.Cut(b, "=")
		if !ok || p == "" || c == "" {
			fmt.Fprintf(stderr, "fsaudit: -before %q: want PATH=COPY\n", b)
			return 2
		}
		cfg.Before[p] = c
	}
	name := fl.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		fmt.Fprintf(stderr, "fsaudit: %v\n", err)
		return 2
	}
	defer f.Close()
	rep, err := fsaudit.Audit(f, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "fsaudit: %s: %v\n", name, err)
		return 2
	}
	for _, v := range rep.Violations {
		fmt.Fprintf(stdout, "%s:%d: %s %s: %s\n", name, v.Line, v.Call, v.Path, v.What)
	}
	fmt.Fprintf(stderr, "fsaudit: %s: %d lines, %d calls, %d commits, %d syncs, exit %d, %d files durably held: %d violations\n",
		name, rep.Lines, rep.Calls, rep.Commits, rep.Syncs, rep.Exit, rep.Held, len(rep.Violations))
	if len(rep.Violations) > 0 {
		return 1
	}
	return 0
}
