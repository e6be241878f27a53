#!/usr/bin/env bash
# make killsweep: a deterministic kill -9 sweep of the dataset-writing steps.
# Offline (no network): the inputs are hex lists an awk seed makes (hashes of
# 4 prefixes, so a commit writes a few files and every instant of it can be
# tried), stategen's answers to plan-retries' jobs (bin/stategen -jobs), and
# datasets those make; every step runs with a fixed --now. Linux only:
# SIGKILL is injected by strace(1) (-e inject=SYSCALL:signal=KILL:when=N).
#
# Scenarios (each on a fresh copy of a prepared dataset; SWEEP_ONLY="a b";
# scripts/scenarios.sh defines them, which make fsaudit traces too):
#   dedup-new      dedup creating a dataset from a 3000-hash list
#   dedup-splice   dedup of two lists (half known) into it, --batch-hashes 300:
#                  one commit per input, known hashes spliced
#   dedup-thaw     dedup of cold (archived, failed, dormant) hashes: rewarmed
#                  and reactivated; and of hot new ones (spliced)
#   plan           plan-retries --limit 200 -o jobs.parquet
#   plan-cold      the same (--keep 4) on hot hashes, cold files and cold
#                  rows in hot files, all four partitions in the cold sweep's
#                  window (00-0f): 50 new jobs and 150 cold ones, 100 from
#                  cold files and 50 of the 100 cold rows in hot files
#   merge-splice   merge of those 200 results (the splice path)
#   merge-full     merge of 2000 results (the full path: > 256 in a partition)
#   merge-archive  merge of 100 results at a --now past archive.unseen (2d,
#                  archive.min_attempts=1): hot failed rows go cold
#   export         export --table state --format csv --replace -o FILE
#   dedup-mig      opt-in (OLD_BIN=path/to/an/older/bin/infohash): each of
#   plan-mig       dedup-splice, plan and merge-splice on a dataset OLD_BIN
#   merge-mig      made, so the killed run first migrates it, drawing the
#                  copy's dataset_id in the same commit; left out, in one
#                  line, without OLD_BIN
# Kill points: each step is first run traced; then, per syscall name, once
# per when=1..M for every rename*, unlink*, mkdirat, linkat, fsync,
# fdatasync, syncfs and ftruncate (M: the run's calls of that name over all
# threads; when= counts per thread, and how the calls spread over Go's
# threads changes from run to run: M is the most one thread can make, so
# the points stay the same whatever the spread, and a point no thread of
# its run reaches completes unkilled; scripts/killpoints.awk makes them),
# the same once more restricted to each path that is the same in every run
# (-P: CURRENT, manifests/N.json, the -o FILE, ...; when= counts per thread,
# so a name's N-th call on one thread can come before another thread's, and
# the path-restricted pass reaches the instants the first one skipped),
# named or held by a descriptor (-P matches a descriptor by its path, which
# the trace's openat results give: the unlinkat(FD, NAME) of a collected
# snapshot's files or a staging folder, the fsync of a folder), and
# SWEEP_MAX (default 12) points split among write, pwrite64 and openat,
# evenly spaced over each one's calls. The syscall and path each kill hit
# is strace's own line (= ?); "covered" counts the reference run's calls
# of the first list some kill hit (R/uncovered.txt: the others). SWEEP_PASSES=2 tries the first list's
# points again with GOMAXPROCS=1, where Go's threads split the calls
# otherwise, so when= reaches other instants (about twice as long).
# After each kill, exactly:
#   1 status --data D --verify exits 0 (or D holds no CURRENT: nothing
#     committed, so a new dataset is not there yet);
#   2 the same command run again (README: dedup and merge re-run on the same
#     input; plan-retries planned again to the same -o FILE, which drops the
#     leases of jobs a kill left unpublished, or refused (exit 2) when the
#     killed run published them (FILE exists), then used as they are;
#     export run again, --replace writing over a FILE the kill left whole)
#     succeeds, and every table (export --format csv, sorted; plan: lease_id
#     masked, as a killed plan that committed takes the next snapshot's id,
#     and each run's copy of the prepared dataset draws a dataset_id of its
#     own, which lease IDs end with)
#     and the -o FILE equal the reference's (the step run without a kill),
#     the ledger holds no input twice, the leases no hash twice, and each
#     table's current link is the folder CURRENT's manifest names;
#   3 running it once more leaves CURRENT as it was (plan: refused, exit 2).
# plan and plan-cold, after 2: each job of the -o FILE holds a live lease
# of its hash and lease_id, and every lease is one of those or was in the
# prepared dataset (no lease of a jobs file a kill left unpublished stays,
# live or ended); and the cold sweep's cursor (the manifest's) is the
# reference's, or one window further when the kill came between the
# commit and the jobs file's rename. The re-run is then a second pass with
# a commit of its own, which moves the sweep on past its own window as
# every pass does (pipeline/plan/lostcold.go); it plans the killed pass's
# cold jobs again outside that window. So the cursor must move once per
# plan commit: it is the reference's moved on by the reference's own step
# (plan's dataset has no cold hash: a step of 0). plan-cold's dataset has
# no hash past partition 03, so the re-run finds nothing in its window
# (10-1f) and plans what the reference does, which 2 checks.
# A killed writer's staging folder (staging/PID-ID-o, born locked) must be
# gone after the re-run. What else is left in staging/, inbox/ or as
# .tmp-* once all ran is counted ("leftovers": a staging folder killed
# before it had its name goes when a minute old, a .tmp-* file when an
# hour old); then they are dated back past those guards and the command
# run once more, which must remove them all (without a commit; plan, whose
# re-run is refused before it opens D, by a dry run: --limit 0, no -o).
# Prints a summary per scenario; failures with the lines that reproduce
# them; exit 1 if any. SWEEP_DIR (killsweep-data).
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
. scripts/lib.sh

OUT=${SWEEP_DIR:-killsweep-data}
MAX=${SWEEP_MAX:-12}
ONLY=${SWEEP_ONLY:-}
PASSES=${SWEEP_PASSES:-1}
GOMAXPROCS0=${GOMAXPROCS:-}
case $MAX in '' | *[!0-9]*) die "SWEEP_MAX is a whole number, not '$MAX'" ;; esac
case $PASSES in 1 | 2) ;; *) die "SWEEP_PASSES is 1 or 2, not '$PASSES'" ;; esac
case ${BASH_VERSION:-} in '' | [0-3].*) die "needs bash 4 or newer (associative arrays)" ;; esac
command -v strace >/dev/null || die "needs strace(1): apt-get install -y strace"
strace -f -qq -o /dev/null true 2>/dev/null || die "strace(1) cannot trace here (ptrace not allowed?)"

EVERY='rename renameat renameat2 unlink unlinkat mkdirat linkat link fsync fdatasync syncfs ftruncate'
SAMPLED='write pwrite64 openat'
TRACE="?$(echo "$EVERY $SAMPLED" | tr ' ' ',')"

rm -rf "$OUT"
mkdir -p "$OUT/prep" "$OUT/runs"
OUT=$(cd "$OUT" && pwd -P)
case $OUT in *[[:space:]]*) die "SWEEP_DIR must not hold spaces: $OUT" ;; esac
P=$OUT/prep
say "killsweep: building bin/infohash, bin/stategen, bin/duckq"
${MAKE:-make} -s build >/dev/null || die "cannot build bin/infohash (make build)"
$GO build -o bin/stategen ./tools/stategen || die "cannot build bin/stategen"
(cd tools/duckcheck && $GO build -o ../../bin/duckq ./cmd/duckq) || die "cannot build bin/duckq"
IH=$ROOT/bin/infohash SG=$ROOT/bin/stategen DQ=$ROOT/bin/duckq
. scripts/scenarios.sh

prepare_scenarios killsweep
TABLES='state torrents leases peers ledger'

# isplan NAME: whether scenario NAME runs plan-retries.
isplan() { case $1 in plan | plan-*) ;; *) return 1 ;; esac; }
# nowof NAME: the --now of the scenario's command.
nowof() { local c=" ${CMDOF[$1]} "; c=${c#* --now }; echo "${c%% *}"; }
mask() { if isplan "$1"; then sed -E 's/L[0-9a-f]{16}(-[0-9a-f]{16})?/L-masked/g'; else cat; fi; }
# snap NAME W: W/snap holds the tables as sorted CSV and the -o output
# (plan: lease ids masked; its jobs file through DuckDB, lease_id left out).
snap() {
	local t
	rm -rf "$2/snap" && mkdir "$2/snap"
	for t in $TABLES; do
		"$IH" export --data "$2/D" --table "$t" --format csv -o - 2>>"$2/check.log" | mask "$1" | sort >"$2/snap/$t.csv" ||
			{ echo "export --table $t failed" >>"$2/snap/errors"; }
	done
	if isplan "$1" && [ -f "$2/jobs.parquet" ]; then
		"$DQ" "SELECT * EXCLUDE (lease_id) FROM read_parquet('$2/jobs.parquet') ORDER BY info_hash" >"$2/snap/jobs.txt" 2>>"$2/check.log" ||
			echo "jobs.parquet unreadable" >>"$2/snap/errors"
	fi
	if [ "$1" = export ] && [ -f "$2/state.csv" ]; then cp "$2/state.csv" "$2/snap/out.csv"; fi
}
# dupes FILE: the first column's values found more than once (header aside).
dupes() { sed 1d "$1" | cut -d, -f1 | sort | uniq -d | wc -l | tr -d ' '; }

# step NAME W [STRACE_ARGS...]: runs the scenario's command in W under
# strace (W/strace.log), returns its exit status. GMP: its GOMAXPROCS.
step() {
	local name=$1 w=$2 rc=0; shift 2
	local -a cmd
	read -ra cmd <<<"$(cmdline "$name" "$w")"
	# (in a subshell, whose stderr takes bash's "Killed")
	(GOMAXPROCS=${GMP:-$GOMAXPROCS0} strace -f -qq -e signal=none -o "$w/strace.log" -e trace="$TRACE" "$@" \
		"$IH" "${cmd[@]}" >"$w/step.out" 2>"$w/step.log"; exit $?) 2>/dev/null || rc=$?
	return $rc
}
# again NAME W: the scenario's command, untraced; its exit status.
again() {
	local -a cmd
	local rc=0
	read -ra cmd <<<"$(cmdline "$1" "$2")"
	"$IH" "${cmd[@]}" >/dev/null 2>>"$2/check.log" || rc=$?
	return $rc
}
current() { cat "$1/D/CURRENT" 2>/dev/null || echo none; }
# writer D: the writer of dataset D's current manifest (dedup, copy, ...).
writer() { { sed -n 's/^ *"writer": "\([^"]*\)".*/\1/p' "$1/manifests/$(cat "$1/CURRENT")"; } 2>/dev/null; }
# cursor D: the cold sweep's cursor in dataset D's current manifest (0 if unset).
cursor() { sed -n 's/^ *"cold_sweep": \([0-9]*\).*/\1/p' "$1/manifests/$(cat "$1/CURRENT")" | grep . || echo 0; }
# leased NAME W: plan's checks of the leases after the re-run (see the
# comment at the top), as failure lines: the jobs of W/jobs.parquet without
# a live lease of their hash and lease_id, and the leases that are neither
# a job's nor the prepared dataset's.
leased() {
	local l="read_parquet('$2/D/leases/current/*.parquet')" j="read_parquet('$2/jobs.parquet')" n
	n=$("$DQ" --header=false --threads 1 "SELECT
		(SELECT count(*) FROM $j j WHERE NOT EXISTS (SELECT 1 FROM $l l WHERE l.info_hash = j.info_hash
			AND l.lease_id = j.lease_id AND l.lease_until > TIMESTAMPTZ '$(nowof "$1")')),
		(SELECT count(*) FROM $l l WHERE l.lease_id NOT IN (SELECT lease_id FROM $j) AND l.lease_id NOT IN
			(SELECT lease_id FROM read_parquet('$P/${PREPOF[$1]}/leases/current/*.parquet')))" 2>>"$2/check.log" | tail -1) ||
		{ echo "cannot read the leases or the jobs (DuckDB)" && return; }
	case $n in
	0$'\t'0) ;;
	[0-9]*$'\t'[0-9]*)
		[ "${n%$'\t'*}" = 0 ] || echo "${n%$'\t'*} jobs of jobs.parquet hold no live lease of their hash and lease_id"
		[ "${n#*$'\t'}" = 0 ] || echo "${n#*$'\t'} leases are neither a job's of jobs.parquet nor the prepared dataset's"
		;;
	*) echo "the lease check printed '$n', not two counts" ;;
	esac
}

# points NAME W: the kill points (strace options, one set per line) from
# the traced run in W/strace.log (scripts/killpoints.awk says how).
points() {
	awk -v every=" $EVERY " -v sampled=" $SAMPLED " -v max="$MAX" -v wpath="$2" \
		-f scripts/killpoints.awk "$2/strace.log" | sort -u
}

FAILS=$OUT/failures.txt
: >"$FAILS"
# check NAME W SPEC: the three checks after a kill; appends failures.
check() {
	local name=$1 w=$2 spec=$3 ref=$OUT/runs/$1/ref f=() t rc2=0 rc3=0 cur pub committed c0 c1 want
	if [ -f "$w/D/CURRENT" ]; then
		"$IH" status --data "$w/D" --verify >"$w/status.out" 2>>"$w/check.log" || f+=("status --verify exits $? after the kill")
	elif [ -e "$w/D" ] && [ "${PREPOF[$name]}" != - ]; then
		f+=("CURRENT is gone")
	fi
	if [ "$name" = export ] && [ -f "$w/state.csv" ] && ! cmp -s "$w/state.csv" "$ref/snap/out.csv"; then
		f+=("the killed export left $w/state.csv, not whole")
	fi
	pub=$([ -f "$w/jobs.parquet" ] && echo y || echo n)
	# whether the kill came after the step's own commit point (CURRENT moved
	# on): not just after a commit its Open makes first, which moves no
	# cursor ("migrate N→M"; writer "copy" was the id of its own each run's
	# copy of the prepared dataset gets, now drawn in the step's own commit):
	# a plan killed between the two has committed nothing of its own (its
	# re-run commits once)
	committed=$([ "${PREPOF[$name]}" != - ] && { [ "$(current "$w")" = "$(cat "$P/${PREPOF[$name]}/CURRENT")" ] ||
		case $(writer "$w/D") in copy | migrate*) ;; *) false ;; esac; } && echo n || echo y)
	again "$name" "$w" || rc2=$?
	if isplan "$name" && [ $rc2 -eq 2 ] && [ "$pub" = y ]; then :; # refused: the run published its jobs, still leased
	elif [ $rc2 -ne 0 ]; then f+=("the re-run exits $rc2"); fi
	snap "$name" "$w"
	[ -f "$w/snap/errors" ] && f+=("$(tr '\n' ' ' <"$w/snap/errors")")
	for t in "$ref"/snap/*; do
		cmp -s "$t" "$w/snap/${t##*/}" || f+=("${t##*/} differs from the reference: diff $t $w/snap/${t##*/}")
	done
	[ "$(dupes "$w/snap/ledger.csv")" = 0 ] || f+=("an input is in the ledger twice")
	[ "$(dupes "$w/snap/leases.csv")" = 0 ] || f+=("a hash is leased twice")
	[ -z "$(stale "$w")" ] || f+=("current links not at CURRENT's snapshot:$(stale "$w")")
	if isplan "$name" && [ -f "$w/jobs.parquet" ] && [ -f "$w/D/CURRENT" ]; then
		while read -r t; do f+=("$t"); done < <(leased "$name" "$w")
		# the cursor moves once per plan commit (see the top): a second one
		# when the kill came after the commit, its jobs file unpublished
		c0=$(cursor "$P/${PREPOF[$name]}") c1=$(cursor "$ref/D") want=$c1
		[ "$committed:$pub" != y:n ] || { want=$(((2 * c1 - c0 + 512) % 256)) && echo "${w##*/}" >>"${w%/*}/unpublished.txt"; }
		[ "$(cursor "$w/D")" = "$want" ] ||
			f+=("the cold sweep's cursor is $(cursor "$w/D"), not $want (prepared $c0, reference $c1, killed after the commit: $committed, jobs published: $pub)")
	fi
	t=$(find "$w/D/staging" -mindepth 1 -maxdepth 1 -name '[0-9]*-o' 2>/dev/null | tr '\n' ' ')
	[ -z "$t" ] || f+=("a killed writer's staging folder outlived the re-run: $t")
	cur=$(current "$w")
	again "$name" "$w" || rc3=$?
	case $name:$rc3 in plan*:2 | dedup*:0 | merge*:0 | export:0) ;; *) f+=("the second re-run exits $rc3") ;; esac
	[ "$(current "$w")" = "$cur" ] || f+=("the second re-run committed (CURRENT $cur -> $(current "$w"))")
	if [ "$name" = export ] && ! cmp -s "$w/state.csv" "$ref/snap/out.csv"; then f+=("the second export differs"); fi
	LEFT=$(leftovers "$w")
	if [ -n "$LEFT" ]; then # past the guards (.tmp-* staging: 1 min; .tmp-*: 1 h) the next run takes them
		(cd "$w" && touch -t 202001010000 $LEFT)
		if isplan "$name" && [ $rc3 -eq 2 ]; then
			# refused (-o FILE exists) before it opens D: the next writer takes
			# them; here a dry run (--limit 0, no -o), which commits nothing
			"$IH" plan-retries --data "$w/D" --now "$(nowof "$name")" --limit 0 >/dev/null 2>>"$w/check.log" || true
		else
			again "$name" "$w" || true
		fi
		[ -z "$(leftovers "$w")" ] || f+=("left once older than the guards: $(leftovers "$w")")
		[ "$(current "$w")" = "$cur" ] || f+=("the third re-run committed (CURRENT $cur -> $(current "$w"))")
	fi
	if [ ${#f[@]} -gt 0 ]; then
		{
			echo "FAIL $name [$spec] killed at: $(hit "$w")"
			for t in "${f[@]}"; do echo "    $t"; done
			echo "    reproduce: rm -rf $w/D$([ "${PREPOF[$name]}" = - ] || echo " && cp -R $P/${PREPOF[$name]} $w/D")"
			echo "        ${GMP:+GOMAXPROCS=1 }strace -f -qq -e signal=none -e trace='$TRACE' $spec $IH $(cmdline "$name" "$w")"
		} >>"$FAILS"
		return 1
	fi
}
# stale W: the tables whose current link (what DuckDB's globs read) is not
# the folder CURRENT's manifest names, as "TABLE->TARGET".
stale() {
	[ -f "$1/D/CURRENT" ] || return 0
	sed -n 's|^ *"dir": "\([a-z]*\)/\(v/[0-9]*\)".*|\1 \2|p' "$1/D/manifests/$(cat "$1/D/CURRENT")" |
		while read -r t v; do [ "$(readlink "$1/D/$t/current")" = "$v" ] || printf ' %s->%s' "$t" "$(readlink "$1/D/$t/current")"; done
}
# leftovers W: what is in D/staging/ or D/inbox/, and .tmp-* files, in W.
leftovers() {
	{ find "$1/D/staging" "$1/D/inbox" -mindepth 1 -maxdepth 1; find "$1" -name '.tmp-*'; } 2>/dev/null | sed "s|$1/||" | tr '\n' ' ' || true
}
# hit W: the call the kill hit: strace's line for it ends "= ?" (or its
# "<unfinished ...>" line, when another thread's line came between).
hit() {
	awk -v w="$1/" '{ tid = $1; sub(/^[0-9]+ +/, "") }
	/^\?\?\?/ { next }
	/ <unfinished \.\.\.>$/ { sub(/ <unfinished \.\.\.>$/, ""); open[tid] = $0; next }
	/ = \?$/ { l = $0; if (/^<\.\.\. [a-z0-9_]+ resumed>/) l = open[tid] ") = ?"
		while ((i = index(l, w)) > 0) l = substr(l, 1, i - 1) substr(l, i + length(w))
		print substr(l, 1, 160); exit }' "$1/strace.log"
}

# coverage R: how many of the reference run's calls of the EVERY names (their
# text, random names and pids masked) some kill hit, of how many; the
# others go to R/uncovered.txt. A call is compared by its first 140
# characters once the pids are masked: hit() keeps a line's first 160
# (a state file's rename is longer), and a pid longer than the
# reference's takes room.
coverage() {
	awk -v every=" $EVERY " -v ref="$1/ref/" '
	function norm(l, i) {
		sub(/^[0-9]+ +/, "", l)
		while ((i = index(l, ref)) > 0) l = substr(l, 1, i - 1) substr(l, i + length(ref))
		if ((i = index(l, " <unfinished")) > 0) l = substr(l, 1, i - 1)
		else if (match(l, /\) += /)) l = substr(l, 1, RSTART - 1)
		# a staging folder: staging/PID-X, or "PID-X" relative to a
		# descriptor of staging/ (the removal of a killed writer folder)
		gsub(/staging\/(\.tmp-)?[0-9]+-/, "staging/P-", l)
		gsub(/"(\.tmp-)?[0-9]+-/, "\"P-", l)
		if (length(l) > 140) { l = substr(l, 1, 140); sub(/[0-9a-f]+$/, "X", l) }
		gsub(/[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+/, "X", l)
		return l
	}
	FNR == NR { sub(/^k[0-9]+ \[[^]]*\] /, ""); hit[norm($0)] = 1; next }
	/resumed>/ { next }
	{ s = $2; sub(/\(.*/, "", s); if (index(every, " " s " ")) { all++; if (norm($0) in hit) got++; else print norm($0) >out } }
	END { printf "%d/%d", got, all }' out="$1/uncovered.txt" "$1/hits.txt" "$1/ref/strace.log"
}

START=$(date +%s)
echo "scenario       points killed completed failed leftovers covered  kills by syscall" >"$OUT/summary.txt"
for name in "${SCEN[@]}"; do
	case " ${ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
	R=$OUT/runs/$name
	fresh "$name" "$R/ref"
	rc=0 && step "$name" "$R/ref" || rc=$?
	[ $rc -eq 0 ] || die "$name: the reference run exits $rc; see $R/ref/step.log"
	snap "$name" "$R/ref"
	[ ! -f "$R/ref/snap/errors" ] || die "$name: cannot export the reference: $(cat "$R/ref/snap/errors")"
	again "$name" "$R/ref" || isplan "$name" || die "$name: re-running the reference run fails; see $R/ref/check.log"
	if isplan "$name"; then
		t=$(leased "$name" "$R/ref")
		[ -z "$t" ] || die "$name: the reference run's leases: $t"
	fi
	points "$name" "$R/ref" >"$R/points"
	n=0 killed=0 done=0 failed=0 left=0
	declare -A bykind=()
	if [ "$PASSES" = 2 ]; then
		grep -v -e '=write:' -e '=pwrite64:' -e '=openat:' "$R/points" | sed 's/^/GOMAXPROCS=1 /' >"$R/points2"
		cat "$R/points2" >>"$R/points"
	fi
	while read -r line; do
		n=$((n + 1)) W=$R/k$n GMP=
		case $line in GOMAXPROCS=1\ *) GMP=1 line=${line#* } ;; esac
		read -ra spec <<<"${line//@W@/$W}"
		fresh "$name" "$W"
		rc=0 && step "$name" "$W" "${spec[@]}" || rc=$?
		if [ $rc -eq 137 ]; then
			killed=$((killed + 1)) h=$(hit "$W")
			k=${h%%(*} && bykind[$k]=$((${bykind[$k]:-0} + 1))
			echo "k$n [${GMP:+GOMAXPROCS=1 }${spec[*]}] $h" >>"$R/hits.txt"
		elif [ $rc -eq 0 ]; then done=$((done + 1))
		else
			echo "FAIL $name [${spec[*]}]: not killed, exits $rc; see $W/step.log" >>"$FAILS"
			failed=$((failed + 1)) && continue
		fi
		LEFT=
		check "$name" "$W" "${spec[*]}" || failed=$((failed + 1))
		[ -z "$LEFT" ] || { left=$((left + 1)) && echo "k$n: $LEFT" >>"$R/leftovers.txt"; }
		[ "$failed" -gt 0 ] || [ "${SWEEP_KEEP:-}" ] || rm -rf "$W"
	done <"$R/points"
	kinds=$(for k in "${!bykind[@]}"; do echo "$k=${bykind[$k]}"; done | sort | tr '\n' ' ')
	touch "$R/hits.txt"
	if isplan "$name"; then
		say "$name: $(cat "$R/unpublished.txt" 2>/dev/null | wc -l) kills between the commit and the jobs file's rename (the re-run dropped their leases): $R/unpublished.txt"
	fi
	printf '%-14s %6d %6d %9d %6d %9d %7s  %s\n' "$name" "$n" "$killed" "$done" "$failed" "$left" "$(coverage "$R")" "$kinds" |
		tee -a "$OUT/summary.txt" >&2
done
say "killsweep: $(($(date +%s) - START)) s; summary in $OUT/summary.txt, kills in $OUT/runs/*/hits.txt"
cat "$OUT/summary.txt"
if [ -s "$FAILS" ]; then cat "$FAILS"; exit 1; fi
echo "killsweep: no failures"
