#!/usr/bin/env bash
# make fsaudit: a durability audit of the dataset-writing steps. make
# killsweep kills each step at ~900 instants and checks the re-run, but a
# kill cannot show a missing fsync: the page cache outlives the process (a
# power cut does not). So each of killsweep's offline scenarios
# (scripts/scenarios.sh: the same prepared datasets and commands) is run
# once under strace(1), and tools/fsaudit replays the trace through its
# durability model (its package comment states it): at every instant a
# power cut must leave a durable CURRENT that names a durable manifest
# whose files are all durable; what a rename onto CURRENT publishes, and
# an -o FILE renamed into place, must be durable before the rename; a step
# that exits 0 has its commit (and -o FILE) durable; and no write or
# removal touches what the durable CURRENT needs. Linux only (strace).
# Prints a summary per scenario and each violation (trace:line: call path:
# what and why), exit 1 if any. FSAUDIT_DIR (fsaudit-data) holds the
# traces; FSAUDIT_ONLY="a b" runs some scenarios.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
. scripts/lib.sh

OUT=${FSAUDIT_DIR:-fsaudit-data}
ONLY=${FSAUDIT_ONLY:-}
case ${BASH_VERSION:-} in '' | [0-3].*) die "needs bash 4 or newer (associative arrays)" ;; esac
command -v strace >/dev/null || die "needs strace(1): apt-get install -y strace"
strace -f -qq -o /dev/null true 2>/dev/null || die "strace(1) cannot trace here (ptrace not allowed?)"
# -s: the content of CURRENT and of each manifest comes from its write.
STRLEN=${FSAUDIT_STRLEN:-1048576}

rm -rf "$OUT"
mkdir -p "$OUT/prep" "$OUT/runs"
OUT=$(cd "$OUT" && pwd -P)
P=$OUT/prep
say "fsaudit: building bin/infohash, bin/stategen, bin/fsaudit"
${MAKE:-make} -s build >/dev/null || die "cannot build bin/infohash (make build)"
$GO build -o bin/stategen ./tools/stategen || die "cannot build bin/stategen"
$GO build -o bin/fsaudit ./tools/fsaudit/cmd/fsaudit || die "cannot build bin/fsaudit"
IH=$ROOT/bin/infohash SG=$ROOT/bin/stategen FA=$ROOT/bin/fsaudit
TRACE=$("$FA" -calls) # what changes files, entries or descriptors, and syncs
. scripts/scenarios.sh
prepare_scenarios fsaudit
# A syncfs covers one file system: the runs' (POSIX df -P: column 6).
MNT=$(df -P "$OUT" | awk 'NR == 2 { print $6 }')

FOUND=0
echo "scenario       lines  calls commits syncs exit held violations" | tee "$OUT/summary.txt"
for name in "${SCEN[@]}"; do
	case " ${ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
	R=$OUT/runs/$name
	fresh "$name" "$R"
	read -ra cmd <<<"$(cmdline "$name" "$R")"
	args=(-cwd "$ROOT" -mount "$MNT" -data "$R/D")
	[ "${PREPOF[$name]}" = - ] || args+=(-before "$R/D=$P/${PREPOF[$name]}")
	prev=
	for w in "${cmd[@]}"; do
		[ "$prev" != -o ] || args+=(-o "$w")
		prev=$w
	done
	sync # the model takes what was there before the trace as durable
	rc=0
	strace -f -q -y -tt -s "$STRLEN" -e signal=none -o "$R/trace" -e trace="$TRACE" \
		"$IH" "${cmd[@]}" >"$R/step.out" 2>"$R/step.log" || rc=$?
	[ $rc -eq 0 ] || die "$name: the traced run exits $rc; see $R/step.log"
	frc=0
	"$FA" "${args[@]}" "$R/trace" >"$R/violations.txt" 2>"$R/fsaudit.log" || frc=$?
	[ $frc -le 1 ] || die "$name: fsaudit failed: $(cat "$R/fsaudit.log")"
	# "fsaudit: TRACE: L lines, C calls, N commits, S syncs, exit X, H files
	# durably held: V violations" (held: the files of the last durable
	# commit, all checked)
	sed -n 's/.*: \([0-9]*\) lines, \([0-9]*\) calls, \([0-9]*\) commits, \([0-9]*\) syncs, exit \(-*[0-9]*\), \([0-9]*\) files durably held: \([0-9]*\) violations$/\1 \2 \3 \4 \5 \6 \7/p' \
		"$R/fsaudit.log" | while read -r l c n s x h v; do
		printf '%-14s %6d %6d %7d %5d %4d %4d %10d\n' "$name" "$l" "$c" "$n" "$s" "$x" "$h" "$v"
	done | tee -a "$OUT/summary.txt"
	# A pass that checked no durable commit (CURRENT, a manifest, a file at
	# least) saw nothing: a trace or model gone wrong, not a clean step.
	held=$(sed -n 's/.*, \([0-9]*\) files durably held: 0 violations$/\1/p' "$R/fsaudit.log")
	[ -z "$held" ] || [ "$held" -ge 3 ] || die "$name: the audit checked no durable commit ($held files); see $R/fsaudit.log"
	if [ -s "$R/violations.txt" ]; then
		FOUND=1
		cat "$R/violations.txt" >>"$OUT/violations.txt"
	fi
done
if [ $FOUND = 1 ]; then
	cat "$OUT/violations.txt"
	exit 1
fi
echo "fsaudit: no violations (traces in $OUT/runs/*/trace)"
