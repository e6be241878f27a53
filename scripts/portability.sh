#!/bin/sh
# portability.sh: fails (exit 1) when a shell script of the repository uses
# a form of a command that only GNU's userland has, or that macOS and the
# BSDs read differently, printing FILE:LINE and what to use instead for
# each. make lint runs it.
#
#   scripts/portability.sh              # the scripts under scripts/ and .ci/,
#                                       # other *.sh files, and the Makefile
#   scripts/portability.sh FILE...      # these files
#
# A line that must keep such a form (a benchmark that only runs on Linux)
# says so in a comment on it or on the line above: "# portability: Linux
# only, WHY". Comments are not checked; quoted text is, like the rest.
# The check itself sticks to POSIX sh and awk (mawk, gawk and macOS's awk).
set -eu

if [ $# -eq 0 ]; then
	cd "$(dirname "$0")/.."
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		list=$(git ls-files)
	else
		list=$(find scripts .ci Makefile -type f 2>/dev/null)
	fi
	for f in $list; do
		# This file names the forms it forbids.
		if [ "$f" = scripts/portability.sh ] || [ ! -f "$f" ]; then
			continue
		fi
		case $f in
		*.sh | Makefile | */Makefile) set -- "$@" "$f" ;;
		scripts/* | .ci/*)
			if head -n 1 "$f" | grep -q '^#!.*sh'; then
				set -- "$@" "$f"
			fi ;;
		esac
	done
	[ $# -gt 0 ] || { echo "portability: no scripts found" >&2; exit 1; }
fi

awk '
BEGIN {
	# B: the start of a command word ("/usr/bin/date" and "$(date" too).
	# A: the arguments before an option, within one simple command.
	B = "(^|[^[:alnum:]_.$-])"
	A = "([^;|&)]*[[:space:]])?"
	E = "([^[:alnum:]]|$)"
	C = "(^|[;&|({!]|if|elif|while|until|then|do|else|exec|command)[[:space:]]*"
	n = 0
	rule(B "date[[:space:]]" A "(-[[:alpha:]]*[dIr]" E "|--[a-z])",
		"date -d/-r/-I and long options are GNU date'\''s (BSD date has no -d, its -r takes seconds): use infohash clock [--now TIME] [--add DURATION]")
	rule(B "date[[:space:]][^;|&)]*%[-_0^#]*[0-9]*N",
		"date +%N is GNU date'\''s (BSD prints N): use infohash clock, which prints fractions")
	rule(B "sed[[:space:]]" A "(-[[:alpha:]]*i([[:space:]]|$)|--[a-z])",
		"sed -i without a suffix (GNU: -i alone, BSD: -i '\'''\''), or a long option: write sed -i.bak ... and remove FILE.bak, which both take")
	rule(B "sed[[:space:]]" A "-[[:alpha:]]*r([[:space:]]|$)",
		"sed -r is GNU sed'\''s: use sed -E, which both take")
	rule(B "readlink[[:space:]]" A "(-[[:alpha:]]*[fem]" E "|--[a-z])",
		"readlink -f/-e/-m are GNU'\''s (macOS before 12.3 lacks -f): use $(cd DIR && pwd -P)")
	rule(B "realpath([[:space:]]|$)",
		"realpath is not on macOS before 13: use $(cd DIR && pwd -P)")
	rule(B "stat[[:space:]]" A "(-[[:alpha:]]*[cf]" E "|--[a-z])",
		"stat -c (GNU) and stat -f (BSD; GNU: file system status) differ: use wc -c <FILE, ls -l or du -k")
	rule(B "grep[[:space:]]" A "(-[[:alpha:]]*P" E "|--perl-regexp)",
		"grep -P is GNU grep'\''s: use grep -E")
	rule(B "find[[:space:]][^;|&]*[[:space:]]-(printf|fprintf|regextype|files0-from)([[:space:]]|$)",
		"find -printf/-regextype are GNU find'\''s: use -print or -exec")
	rule(B "du[[:space:]]" A "(-[[:alpha:]]*b" E "|--(bytes|apparent-size))",
		"du -b/--apparent-size are GNU du'\''s: use du -k, or wc -c <FILE for a file'\''s bytes")
	rule(C "timeout[[:space:]]",
		"timeout is GNU coreutils'\'' (not on macOS or the BSDs): use the command'\''s own deadline, or kill it from a background sleep")
	rule(B "xargs[[:space:]]" A "(-[[:alpha:]]*[rda]" E "|--[a-z])",
		"xargs -r/-d/-a and long options are GNU xargs'\''s: check the input is not empty first; use tr to NUL and xargs -0")
	rule(B "mktemp[[:space:]]" A "(-[[:alpha:]]*[tp]" E "|--[a-z])",
		"mktemp -t/-p and long options differ between GNU and BSD: give a template, mktemp \"${TMPDIR:-/tmp}/NAME.XXXXXX\"")
	rule(B "cp[[:space:]]" A "(-[[:alpha:]]*[lTt]" E "|--[a-z])",
		"cp -l/-t/-T and long options are GNU cp'\''s (macOS cp has none of them)")
	rule(B "ln[[:space:]]" A "(-[[:alpha:]]*r" E "|--[a-z])",
		"ln -r and long options are GNU ln'\''s: give the relative target yourself")
	rule(B "head[[:space:]]" A "-[nc][[:space:]]*-[0-9]",
		"head with a negative count is GNU head'\''s: use sed or awk")
	rule(B "nproc([^[:alnum:]_-]|$)",
		"nproc is GNU coreutils'\'' (not on macOS): use getconf _NPROCESSORS_ONLN")
	rule(B "(md5|sha1|sha224|sha256|sha384|sha512|b2)sum([^[:alnum:]_-]|$)",
		"the *sum checksum commands are GNU coreutils'\'' (not on macOS): use shasum -a 256")
	rule(B "numfmt([^[:alnum:]_-]|$)",
		"numfmt is GNU coreutils'\'' (not on macOS): format with awk")
	rule(C "tac([[:space:]]|$)",
		"tac is GNU coreutils'\'' (not on macOS): reverse lines with awk")
	rule(B "time[[:space:]]+(-[[:alpha:]]*[fvo]" E "|--[a-z])",
		"/usr/bin/time -f/-v/-o are GNU time'\''s (macOS'\''s has -l and -p): time -p is POSIX")
}
function rule(re, msg) { n++; res[n] = re; msgs[n] = msg }
FNR == 1 { prev = "" }
{
	line = $0
	exempt = index(line, "portability: Linux only") || index(prev, "portability: Linux only")
	prev = line
	if (exempt) next
	code = line
	sub(/(^|[[:space:]])#.*$/, "", code)
	for (i = 1; i <= n; i++) {
		if (code ~ res[i]) {
			printf "%s:%d: %s\n", FILENAME, FNR, msgs[i]
			bad++
			break
		}
	}
}
END {
	if (bad) {
		fflush()
		printf "portability: %d use(s) of GNU-only forms above (a line that must keep one says \"# portability: Linux only, WHY\")\n", bad > "/dev/stderr"
		exit 1
	}
}' "$@"
