# Shared helpers for the scripts in this folder. Source it: . scripts/lib.sh
# Needs bash, awk and GNU time as /usr/bin/time (Debian package "time"):
# timed, and so every benchmark that uses it, runs on Linux only.

GO=${GO:-go}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
say() { echo "$*" >&2; }

# count_of 10M -> 10000000 (k, M, G suffixes as obsgen reads them).
count_of() {
	awk -v s="$1" 'BEGIN {
		m = 1; c = substr(s, length(s));
		if (c == "k" || c == "K") m = 1e3; else if (c == "M") m = 1e6; else if (c == "G" || c == "B") m = 1e9;
		if (m != 1) s = substr(s, 1, length(s) - 1);
		if (s !~ /^[0-9]+(\.[0-9]+)?$/) exit 1;
		printf "%d\n", s * m }' || die "bad size $1"
}

# build_tools builds bin/infohash (unless $INFOHASH_BIN names another
# binary), bin/obsgen and bin/duckq (DuckDB, from the tools/duckcheck module).
build_tools() {
	if [ -z "${INFOHASH_BIN:-}" ]; then
		(cd "$ROOT" && $GO build -o bin/infohash ./cmd/infohash) || die "cannot build bin/infohash"
	fi
	(cd "$ROOT" && $GO build -o bin/obsgen ./tools/obsgen/cmd/obsgen) || die "cannot build bin/obsgen"
	(cd "$ROOT/tools/duckcheck" && $GO build -o ../../bin/duckq ./cmd/duckq) || die "cannot build bin/duckq"
}

# timed NAME CMD...: runs CMD under /usr/bin/time, stderr to $OUT/NAME.log;
# sets TIMED_S (wall seconds) and TIMED_MB (peak RSS in MB). Fails with the
# log's tail if CMD fails. It syncs first, so that a command that makes its
# output durable (dedup's commit ends with syncfs) does not also pay for
# flushing what the script wrote just before (a dataset, DuckDB's copy).
timed() {
	local name=$1; shift
	[ -x /usr/bin/time ] || die "/usr/bin/time is missing: apt-get install -y time"
	/usr/bin/time -f '' -o /dev/null true 2>/dev/null || # portability: Linux only, the check for GNU time
		die "/usr/bin/time is not GNU time (no -f, -o): the benchmarks run on Linux only"
	sync
	local log="$OUT/$name.log" tf="$OUT/$name.time"
	# portability: Linux only, GNU time's -f and -o (peak RSS: %M)
	if ! /usr/bin/time -f '%e %M' -o "$tf" "$@" >"$OUT/$name.out" 2>"$log"; then
		tail -5 "$log" >&2
		die "$name failed: $*"
	fi
	read -r TIMED_S kb < <(tail -1 "$tf")
	TIMED_MB=$(awk -v k="$kb" 'BEGIN { printf "%.0f", k / 1024 }')
}

# warm FILE...: reads FILEs into the page cache. On this VM a page nobody
# touched for about a minute is paged out (DAMON's pageout scheme: regions
# idle for 12 aggregation intervals of 5 s, up to 128 MB/s), so a file read
# once before a loop of runs is partly on disk again by the later runs:
# warm the inputs right before each timed command, on both sides.
warm() { cat "$@" >/dev/null; }

# json_int FILE KEY: an integer field of a flat JSON file (obsgen's ground truth).
json_int() { sed -n "s/^ *\"$2\": *\(-\{0,1\}[0-9][0-9]*\).*/\1/p" "$1" | head -1; }

# ratio A B: A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.2f", a / b }'; }

# verdict OK_EXPR...: "ok" when awk finds the expression true, else "MISS".
verdict() { awk "BEGIN { exit !($*) }" && echo ok || echo MISS; }

# duck_scalar SQL: the single value a DuckDB query returns.
duck_scalar() { "$ROOT/bin/duckq" --header=false --threads 2 "$1" 2>/dev/null | tail -1; }
