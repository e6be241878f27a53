#!/usr/bin/env bash
# One unattended crawl pass: apply what earlier passes left unapplied,
# capture for a while, fold the observations in, plan due retries, fetch
# their metadata, merge the results, export.
#
#   crawl-pass.sh [--] DATA_DIR [CAPTURE_DURATION]   (capture's --duration; default 10m)
#   crawl-pass.sh --help      (this text; any other "-" argument: exit 2)
#
# Environment: INFOHASH (binary, default infohash on PATH), BOOTSTRAP
# (host:port,... for capture and fetch; unset: infohash's public routers;
# set but empty: none), LIMIT (jobs per pass, default 5000; when the last
# 3 plans each left more than 10 x LIMIT due hashes unplanned, the pass
# logs a WARN line: the backlog does not drain), EXPORT_DIR
# (default DATA_DIR/export), LOCK_WAIT (how long dedup, plan-retries and merge wait
# for another writer, default 10m), KEEP (snapshots dedup, plan-retries and
# merge keep for readers, their --keep; default theirs, 3: raise it for
# reads of status's frozen: path that outlast a pass), PASS_BUDGET (how
# long the pass may take, in whole hours, minutes and seconds such as 14m
# or 1h30m: fetch gets --deadline of what is left of it as it starts, at
# least 1s, unless FETCH_ARGS gives one; so that a pass of slow, failing
# jobs ends within its cron slot, where flock -n would skip the next
# slots; the jobs it does not start are released; unset: no budget), NOW
# (RFC 3339, for tests and demos: the pass's clock reads NOW as it begins
# and runs on at the wall clock's pace; each step but export gets --now
# NOW plus the time elapsed since, so the steps' times agree as they do on
# the wall clock), PASS (the pass's name: its folder DATA_DIR/work/PASS,
# its log lines' tag; default the UTC time it starts, such as
# 20261204T131500Z; a name taken gets -2, -3, ...), METRICS_DIR
# (node_exporter textfile directory; off when unset: each step's and
# status's infohash_STEP.prom, and the pass's infohash_crawl_pass.prom:
# infohash_crawl_pass_exit_status, _run_duration_seconds,
# _last_success_timestamp_seconds (moves on exit 0 only),
# infohash_crawl_pass_last_completed_timestamp_seconds (moves on exit 0
# or 3: every step ran), and catchup_exit_status{step} and
# catchup_inputs{step}, which tell of the catch-up runs, which write
# theirs, and their --stats-json, into the pass's folder as
# catchup-STEP-PASS.prom and .json: a catch-up's failure is not replaced
# by the pass's own run), METRICS_LABEL (NAME=VALUE,...,
# e.g. dataset=main: for datasets whose passes share one METRICS_DIR; each
# step and status gets --metrics-label, the pass's series get the labels
# too, and every file's name gets them, as infohash_STEP.dataset=main.prom
# (characters but letters, digits and _.,=+- as _); unset: the names
# above; setting it leaves the files of those names for you to remove;
# ignored without METRICS_DIR),
# KEEP_PASSES (pass folders kept under DATA_DIR/work, default 10),
# CAPTURE_ARGS / FETCH_ARGS (extra flags, e.g. "--dht-listen 127.0.0.1:0",
# "--timeout 5s"). A variable that looks like one of these but is not
# (DATADIR, INFOHASH_DATADIR, EXPORTDIR: names starting INFOHASH, DATA_,
# DATADIR, BOOTSTRAP, LIMIT, EXPORT, LOCK, KEEP, PASS_, NOW, METRICS,
# CAPTURE or FETCH) gets a WARN line on stderr as the pass begins, and is
# ignored; the pass goes on.
#
# Every step's output is a file under DATA_DIR/work/PASS/ before the next
# step reads it (plan-retries' by way of DATA_DIR/work/jobs.parquet, a
# path kept from pass to pass: see JOBS below). capture and fetch write
# theirs as Arrow IPC streams (-o - into observations.arrows and
# results.arrows), batch by batch as rows come (capture within 200ms,
# fetch within 1s), so that a step killed with SIGKILL (or by the OOM
# killer) leaves every whole batch it wrote: dedup and merge apply a
# stream cut short up to its last whole batch (exit 3: partial), and a
# stream its writer still writes they skip (its lock). Passes before
# this wrote Parquet (observations.parquet, results.parquet): their
# leftovers are applied too. Once dedup has committed the observations,
# or merge the results, the file is marked applied (FILE.applied beside
# it) and removed; an empty one (its step killed before it wrote
# anything) holds nothing to apply and is marked so. A
# pass that stops before that (capture or fetch got SIGTERM or SIGKILL, dedup or merge
# found the dataset locked or failed) leaves the file unmarked, and every
# pass first applies the unmarked files of all passes, oldest pass first
# (the order the folders were made, which each one's .pass.seq keeps):
# dedup and merge skip an input already in the ledger, so applying one
# again is safe (results wait while DATA_DIR holds no dataset, as a new
# one whose first dedup committed nothing, until the pass's own dedup
# makes it: merge makes none). A fetch stopped early (SIGTERM, a --deadline in FETCH_ARGS)
# writes a released row for each job it did not attempt: merging its
# results gives those leases back, so the next plan-retries re-plans them
# at once (jobs a kill -9 drops wait for lease_until). A file that is bad
# input (exit 2, the error naming it) is moved to DATA_DIR/inbox/
# (results: inbox/merge/) as crawl-pass-PASS-NAME.bad, where `infohash
# status` lists it as rejected, so that it does not stop every later pass;
# the pass goes on and exits 2. A file left by an earlier pass that fails
# with exit 1 stays for the next pass, and this pass goes on (exit 3)
# rather than capture nothing new until someone acts.
# One pass runs at a time over DATA_DIR: each holds the flock(2) of
# DATA_DIR/work/.pass.lock (needs flock(1), util-linux's), and makes a new
# folder DATA_DIR/work/PASS (PASS-2, ... if the name is taken). The steps
# it starts hold that lock too (they inherit it), on purpose: a step left
# running by a pass killed with SIGKILL still writes into its pass's folder
# and the dataset, so later passes skip (exit 75) until it ends, as it
# does by itself (capture after CAPTURE_DURATION, fetch at its deadline,
# dedup or merge once committed); `fuser -v DATA_DIR/work/.pass.lock`
# names it, should it have to go sooner (SIGTERM: it commits what it has). An empty
# file still being written (its writer holds its lock) is left unmarked.
# A file applied is removed (its marker FILE.applied stays, so that no
# pass applies it again); one not applied is kept, whatever its age. A
# pass folder (then the steps' --stats-json files, plan-retries' jobs
# file, markers, files left to apply) is removed once it is not among the
# KEEP_PASSES (default 10) newest (made last, whatever their names) and
# nothing in it is left to apply, or
# as the pass ends if it holds nothing. SIGINT
# or SIGTERM is passed on to the step at work, which commits what it has;
# the pass waits for it and exits 130.
# Before any step the arguments are checked (exit 2, one line): INFOHASH
# names an executable that runs (--version), METRICS_DIR (if set) is a
# folder it can write in, DATA_DIR is a folder or a new one in an existing
# folder, not inside a dataset (a mistyped path is refused, not grown into a new tree; EXPORT_DIR
# likewise), CAPTURE_DURATION, LOCK_WAIT and PASS_BUDGET are durations,
# LIMIT a count, KEEP and KEEP_PASSES one of 1 or more, NOW an RFC 3339 time (as
# `infohash clock --now NOW` parses it: no GNU date needed). Exit statuses:
#   0  pass complete
#   75 another pass holds DATA_DIR/work/.pass.lock (nothing done, no metrics
#      written: they are the running pass's); or
#      a step found its lock held (the rest of the pass skipped): dedup,
#      plan-retries or merge the dataset's (another writer), capture or
#      fetch DATA_DIR/dht-state's (another capture, or fetch, on it)
#   3  pass partial (some work left for the next pass, or capture or fetch
#      heard from no DHT node: an outage; what was done is committed)
#   1/2 a step failed (see the log), and the pass stopped there (export
#      or status: after the tidy-up); or 2: a file it applied was bad
#      input, set aside (above), and the pass went on; or 1: the pass
#      cannot create its folders in DATA_DIR or EXPORT_DIR; or 2: a bad
#      argument
#   130 interrupted
# A step killed by a signal the pass did not pass on (kill -9, the OOM
# killer: status 128+N) is a failed step, exit 1 (not 137): unlike one
# interrupted (130) it did not commit what it had, and someone should
# look. Only a pass that is itself killed ends with 128+N. export or
# status failing is a failed step too (its exit status; status's first)
# that does not stop the pass: status runs, the work folders are tidied.
# EXPORT_EVERY: the export (export --table catalog --format parquet -o
# EXPORT_DIR/catalog.parquet) reads the whole state: at 20M hashes some
# 50s of CPU and 1 GB written. Unset or empty, every pass exports.
# EXPORT_EVERY=DURATION (whole days, hours and minutes: 55m, 6h, 1d)
# exports only in a pass that began at least DURATION after the last pass
# that exported began (in whole minutes of the wall clock, as cron starts
# passes; NOW changes nothing), or when EXPORT_DIR/catalog.parquet is
# missing; EXPORT_EVERY=never never exports (export from a cron line of
# its own). A pass that skips it says so in its log and exits as if it
# had exported; METRICS_DIR's infohash_export.prom keeps the last
# export's gauges: its last_success_timestamp_seconds says when the
# catalog was written (alert on it older than DURATION and a pass). The
# last export's pass is recorded in DATA_DIR/work/export.last; an export
# that fails or is interrupted is not, so the next pass exports. A bad
# value is refused before any step (exit 2).
#
# It needs bash 5.0 or newer: exec {fd}> (4.1), "${a[@]}" of an empty array
# under set -u (4.4), and wait on the last process substitution (5.0, per
# bash's NEWS; apply waits so for its copy of a step's stderr). macOS's
# /bin/bash is 3.2, CentOS 7's 4.2, RHEL 8's 4.4: the check below, the
# script's first command, says so in one line (exit 2) rather than let it
# fail half-way or race. It reads BASH_VERSION in forms that bash 3.2 and a
# POSIX sh parse (BASH_VERSINFO is an array, which sh cannot read), so that
# `sh crawl-pass.sh` is told too.
case ${BASH_VERSION:-} in
'' | [0-4].*)
	printf '%s\n' "crawl-pass.sh: needs bash 5.0 or newer (exec {fd}>, empty arrays under set -u, wait on a process substitution); this is ${BASH_VERSION:+bash }${BASH_VERSION:-not bash}: run it with a newer bash, e.g. /opt/homebrew/bin/bash $0 DATA_DIR [CAPTURE_DURATION] on macOS after brew install bash, or put that bash first on PATH (#!/usr/bin/env bash runs the first)" >&2
	exit 2
	;;
esac

set -uo pipefail
export LC_ALL=C # sort(1) compares the pass folders' keys bytewise

# Arguments starting with "-" are options, of which there are two: -h and
# --help print the comment above (exit 0); any other is a usage error, so
# that a mistyped option is not taken for DATA_DIR (a folder made, a
# capture toward the public routers). "--" ends them (a DATA_DIR that
# starts with "-"; or write ./-DIR).
if [ "${1:-}" = -- ]; then shift; else for a in "$@"; do
	case $a in
		-h | --help)
			sed -n '2,/^[^#]/s/^# \{0,1\}//p' -- "$0" 2>/dev/null ||
				echo "usage: crawl-pass.sh DATA_DIR [CAPTURE_DURATION]"
			exit 0 ;;
		-*) printf '%s\n' "crawl-pass.sh: $a: no such option (it takes none: settings are environment variables, which --help lists); usage: crawl-pass.sh [--] DATA_DIR [CAPTURE_DURATION]" >&2
			exit 2 ;;
	esac
done; fi

# slashed VAR: the path in VAR with each run of slashes one slash and no
# trailing one ("/" stays), so that a folder typed as "DIR/" (shell
# completion's) is not logged, passed to the steps and recorded in the
# ledger as "DIR//work/PASS/…".
slashed() {
	local p=${!1}
	while [[ $p == *//* ]]; do p=${p//\/\//\/}; done
	[ "$p" = / ] || p=${p%/}
	printf -v "$1" '%s' "$p"
}
DATA=${1:-}
slashed DATA
# A DATA_DIR given after "--" that starts with "-" is a path to the steps
# too (their arguments, tee's, grep's), not an option.
case $DATA in -*) DATA=./$DATA ;; esac
DURATION=${2:-10m}
IH=${INFOHASH:-infohash}
LIMIT=${LIMIT:-5000}
LOCK_WAIT=${LOCK_WAIT:-10m}
EXPORT_DIR=${EXPORT_DIR:-$DATA/export}
slashed EXPORT_DIR
[ -z "${METRICS_DIR:-}" ] || slashed METRICS_DIR
PASS=${PASS:-$(date -u +%Y%m%dT%H%M%SZ)}
WORK=$DATA/work/$PASS

# metrics STEP: STEP's --metrics-file flag, one word: callers quote it, as
# ${METRICS_DIR:+"$(metrics STEP)"} (nothing without METRICS_DIR), for a
# METRICS_DIR holding a space or a glob character split into arguments.
metrics() { [ -n "${METRICS_DIR:-}" ] && echo "--metrics-file=$METRICS_DIR/infohash_$1$msuffix.prom"; }
# quoted ARGS...: ARGS as the shell reads them back, for the log's
# command lines (a path holding a space read as two words): one of only
# letters, digits and _./:,=@%+- as it is, any other in single quotes
# (printf %q escaped every comma of --bootstrap's list, and wrote
# non-ASCII letters as octal escapes under LC_ALL=C).
quoted() {
	local a sep=''
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:,=@%+-]+$ ]]; then
			printf '%s%s' "$sep" "$a"
		else
			printf "%s'%s'" "$sep" "${a//\'/\'\\\'\'}"
		fi
		sep=' '
	done
}
# METRICS_LABEL (checked below): mlabel, the steps' --metrics-label;
# plabels, the pass's own series' labels; msuffix, the files' names'.
mlabel=() plabels='' msuffix=''
log() { printf '%s crawl-pass %s: %s\n' "$(date -u +%FT%TZ)" "$PASS" "$*" >&2; }
usage() { log "$*"; usage_err=1; exit 2; }
usage_err=''  # the pass ends on a usage error: its one line says all

# An environment variable that looks like one of the pass's (its
# prefixes) but is not one it reads is most likely a typo (DATADIR,
# INFOHASH_DATADIR, EXPORTDIR), which would otherwise be ignored without
# a word: one line each on stderr, and the pass goes on. INFOHASH_DATA is
# infohash's own (--data), which the pass gives every step.
knownvars=" INFOHASH INFOHASH_DATA BOOTSTRAP LIMIT EXPORT_DIR EXPORT_EVERY LOCK_WAIT KEEP KEEP_PASSES PASS PASS_BUDGET NOW METRICS_DIR METRICS_LABEL CAPTURE_ARGS FETCH_ARGS "
for v in $(compgen -e 2>/dev/null); do
	case $v in
		INFOHASH* | DATA_* | DATADIR* | BOOTSTRAP* | LIMIT* | EXPORT* | LOCK* | KEEP* | PASS_* | PASSBUDGET* | NOW* | METRICS* | CAPTURE* | FETCH*) ;;
		*) continue ;;
	esac
	case $knownvars in *" $v "*) continue ;; esac
	# The name meant: the same letters but for "_" and an INFOHASH_ before.
	norm=${v#INFOHASH_} meant=''
	for k in $knownvars DATA_DIR CAPTURE_DURATION; do
		[ "${k//_/}" != "${norm//_/}" ] || meant=$k
	done
	case $meant in
		DATA_DIR | CAPTURE_DURATION) meant="; $meant is an argument (crawl-pass.sh DATA_DIR [CAPTURE_DURATION]), not a variable" ;;
		?*) meant="; did you mean $meant?" ;;
		*) meant="; --help lists the variables it reads" ;;
	esac
	log "WARN: environment variable $v is not one crawl-pass.sh reads: ignored$meant"
done
partial=0 bad=0 catchup=0
# The catch-up runs' worst exit status and the files they applied, by step.
cu_exit_dedup=0 cu_exit_merge=0 cu_in_dedup=0 cu_in_merge=0

# With METRICS_DIR, the pass ends by writing its own gauges there, in
# infohash_crawl_pass.prom, whatever its status (a usage error's too), to
# alert on passes that keep ending 3 or 75: exit_status, run_duration_seconds,
# last_success_timestamp_seconds, which moves only on exit 0, and
# last_completed_timestamp_seconds, which moves on exit 0 or 3 (a pass
# that ran every step, partial or not: with PASS_BUDGET a busy pass ends
# 3 every time), else the replaced file's stay. It is written aside and renamed into place, so
# node_exporter never reads half of it; as infohash writes --metrics-file, a
# symbolic link's target is what is replaced (the link stays), and a FIFO or
# device is written in place, never replaced. EPOCHREALTIME (bash 5.0) needs
# no date(1).
began=${EPOCHREALTIME/./}
passmetrics() {
	local rc=$1 f=$METRICS_DIR/infohash_crawl_pass$msuffix.prom end=${EPOCHREALTIME/./} last='' completed='' us
	local l=${plabels:+\{$plabels\}} s=${plabels:+$plabels,}
	[ "$rc" = 0 ] && last=${end%??????}
	[ "$rc" = 0 ] || [ "$rc" = 3 ] && completed=${end%??????}
	[ -n "$last" ] || [ ! -f "$f" ] ||
		last=$(sed -n 's/^infohash_crawl_pass_last_success_timestamp_seconds\({.*}\)\{0,1\} \([0-9.e+]*\)$/\2/p' "$f")
	[ -n "$completed" ] || [ ! -f "$f" ] ||
		completed=$(sed -n 's/^infohash_crawl_pass_last_completed_timestamp_seconds\({.*}\)\{0,1\} \([0-9.e+]*\)$/\2/p' "$f")
	us=$((end - began))
	# to: where the links from f lead (f has a slash: ${to%/*} is its
	# folder); out: the file written, renamed onto to unless it is to
	# itself: a FIFO or device, written in place (a directory: refused, as
	# writing it fails; mv would have moved the file into it).
	local to=$f out hops=0 d
	while [ -L "$to" ] && [ $hops -lt 40 ] && d=$(readlink -- "$to"); do
		case $d in /*) to=$d ;; *) to=${to%/*}/$d ;; esac
		hops=$((hops + 1))
	done
	out=$to.tmp$$
	[ ! -e "$to" ] || [ -f "$to" ] || out=$to
	{
		printf '# HELP infohash_crawl_pass_exit_status Exit status of the last crawl pass: 0 ok, 1 error, 2 bad input or usage, 3 partial, 75 a lock held, 130 interrupted.\n'
		printf '# TYPE infohash_crawl_pass_exit_status gauge\ninfohash_crawl_pass_exit_status%s %d\n' "$l" "$rc"
		printf '# HELP infohash_crawl_pass_run_duration_seconds Wall time of the last crawl pass, whatever its exit_status.\n'
		printf '# TYPE infohash_crawl_pass_run_duration_seconds gauge\ninfohash_crawl_pass_run_duration_seconds%s %d.%06d\n' "$l" $((us / 1000000)) $((us % 1000000))
		if [ -n "$last" ]; then
			printf '# HELP infohash_crawl_pass_last_success_timestamp_seconds When the last crawl pass that exited 0 ended (Unix time); a pass that did not leaves it as it was.\n'
			printf '# TYPE infohash_crawl_pass_last_success_timestamp_seconds gauge\ninfohash_crawl_pass_last_success_timestamp_seconds%s %s\n' "$l" "$last"
		fi
		printf '# HELP infohash_crawl_pass_catchup_exit_status The worst exit status (1, then 2, 130, 75, 3) of the catch-up runs of a step (dedup or merge applying earlier passes'"'"' files) in the last pass; 0 when none failed or none ran.\n'
		printf '# TYPE infohash_crawl_pass_catchup_exit_status gauge\n'
		printf 'infohash_crawl_pass_catchup_exit_status{%sstep="%s"} %d\n' "$s" dedup "$cu_exit_dedup" "$s" merge "$cu_exit_merge"
		printf '# HELP infohash_crawl_pass_catchup_inputs Files a step'"'"'s catch-up runs applied (committed whole) in the last pass.\n'
		printf '# TYPE infohash_crawl_pass_catchup_inputs gauge\n'
		printf 'infohash_crawl_pass_catchup_inputs{%sstep="%s"} %d\n' "$s" dedup "$cu_in_dedup" "$s" merge "$cu_in_merge"
		if [ -n "$completed" ]; then
			printf '# HELP infohash_crawl_pass_last_completed_timestamp_seconds When the last crawl pass that ran every step ended, exit 0 or 3 (partial: e.g. PASS_BUDGET cut its fetch) (Unix time); a pass that did not leaves it as it was.\n'
			printf '# TYPE infohash_crawl_pass_last_completed_timestamp_seconds gauge\ninfohash_crawl_pass_last_completed_timestamp_seconds%s %s\n' "$l" "$completed"
		fi
	} 2>/dev/null >"$out" && { [ "$out" = "$to" ] || mv -f -- "$out" "$to"; } 2>/dev/null || {
		[ "$out" = "$to" ] || rm -f -- "$out"
		# One line (not the shell's too); none after a usage error's.
		[ -n "$usage_err" ] || log "cannot write $f (METRICS_DIR)"
	}
}
# The order of the pass folders, DATA_DIR/work/*/, for the catch-up
# (oldest first) and KEEP_PASSES (the newest kept) is the order the passes
# made them, not their names' (bytewise, a-2/ came before a/, as - is
# below /, and 10/ before 9/). Each pass writes into the folder it makes
# its sequence number, SEQ: one more than the highest there (under
# .pass.lock, so no two passes draw the same). Fallback: a folder with no
# SEQ (or not a number of up to 18 digits), made by a crawl-pass.sh
# before this one or by hand, is taken as made before every folder that
# has one, and comes first; among themselves such folders go by name,
# each run of digits taken as a number (9 before 10; a before a-2 before
# a-10), as older passes named theirs.
SEQ=.pass.seq
# seqof DIR: pseq, DIR's sequence number; empty if it has none.
seqof() {
	pseq=''
	[ ! -f "$1/$SEQ" ] || IFS= read -r pseq <"$1/$SEQ" 2>/dev/null
	if [[ $pseq =~ ^[0-9]{1,18}$ ]]; then pseq=$((10#$pseq)); else pseq=''; fi
}
# natkey NAME: key, NAME with each run of digits as its length (two
# digits) and its value: bytewise, keys sort the runs as numbers. Bytes
# other than printable ASCII are ? (no tab or newline in sort's lines).
natkey() {
	local s=${1//[^[:print:]]/?} run
	key=''
	while [[ $s =~ ^([^0-9]*)([0-9]+)(.*)$ ]]; do
		key+=${BASH_REMATCH[1]} run=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
		while [ ${#run} -gt 1 ] && [ "${run:0:1}" = 0 ]; do run=${run:1}; done
		printf -v run '%02d%s' ${#run} "$run"
		key+=$run
	done
	key+=$s
}
# passorder: passes, the pass folders (no trailing /), oldest first. The
# lines sorted are "0 NAMEKEY" (no SEQ) or "1 SEQKEY", a tab (below any
# key's byte: a key that is another's prefix comes first), and the index.
passes=()
passorder() {
	local d line dirs=() lines=()
	passes=()
	for d in "$DATA"/work/*/; do
		[ -d "$d" ] || continue # no folder: the pattern itself
		d=${d%/}
		seqof "$d"
		if [ -n "$pseq" ]; then natkey "$pseq"; key="1 $key"; else natkey "${d##*/}"; key="0 $key"; fi
		printf -v line '%s\t%06d' "$key" ${#dirs[@]}
		lines+=("$line")
		dirs+=("$d")
	done
	[ ${#dirs[@]} -gt 0 ] || return 0
	while IFS= read -r line; do
		passes+=("${dirs[10#${line##*$'\t'}]}")
	done < <(printf '%s\n' "${lines[@]}" | sort)
}

# finish: on the way out, whatever the status. A pass that left nothing
# in its folder (locked out at capture) removes it, so that it does not
# count among the KEEP_PASSES kept and push out real passes' files.
made=''
finish() {
	local rc=$?
	local f
	# An empty output of capture or fetch (locked out, or killed before
	# it wrote anything) holds nothing to apply.
	# Only this pass's own folder (not an earlier pass's of that name).
	if [ -n "$made" ]; then
		for f in "$WORK"/observations.arrows "$WORK"/results.arrows; do
			[ -s "$f" ] || [ ! -f "$f" ] || [ -e "$f.applied" ] || rm -f -- "$f"
		done
		# Its sequence number alone is nothing to keep.
		[ "$(ls -A -- "$WORK" 2>/dev/null)" != "$SEQ" ] || rm -f -- "$WORK/$SEQ"
		rmdir -- "$WORK" 2>/dev/null
	fi
	[ -z "${METRICS_DIR:-}" ] || [ -n "$passlocked" ] || passmetrics "$rc"
}
passlocked=''
trap finish EXIT

# SIGINT and SIGTERM are passed on to the step at work (each runs in the
# background, as bash runs a trap only once a foreground command is done),
# which stops, commits what it has, and ends; then the pass stops, exit 130.
sig='' child='' nsig=0
forward() {
	sig=$1 nsig=$((nsig + 1))
	[ -z "$child" ] || kill -s "$1" "$child" 2>/dev/null
	return 0
}
trap 'forward INT' INT
trap 'forward TERM' TERM

# reap PID: wait for PID to end, whatever signals come meanwhile, and
# return its exit status (bash keeps it for a later wait). wait's stderr
# is bash's notice of a step killed by a signal ("line N: PID Killed
# ..."), which run says itself, once, in a line of the pass's.
reap() {
	local n rc
	while n=$nsig; wait "$1" 2>/dev/null; rc=$?; [ "$n" != "$nsig" ]; do :; done
	return $rc
}

# run CMD...: run a step's command, passing signals on to it. A signal
# that came before it starts means it does not start (exit 130). With
# to set, the command's stdout goes to the file it names (the redirection
# made in the child alone); run clears it.
to=''
run() {
	local out=$to
	to=''
	[ -z "$sig" ] || return 130
	if [ -n "$out" ]; then
		"$@" >"$out" &
	else
		"$@" &
	fi
	child=$!
	# A signal that came as it started found no child to pass it to.
	[ -z "$sig" ] || kill -s "$sig" "$child" 2>/dev/null
	reap "$child"
	local rc=$?
	child=''
	# A status above 128 is a step killed by a signal (kill -9, the OOM
	# killer): interrupted if the pass passed one on, else a failure.
	if [ $rc -gt 128 ] && [ $rc != 130 ]; then
		[ -z "$sig" ] || return 130
		log "$2: killed by SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))) (status $rc): a failure (exit 1)"
		return 1
	fi
	return $rc
}

# METRICS_LABEL: NAME=VALUE,... as --metrics-label takes it. NAME is a
# Prometheus label name, not __*, nor one the series use (this list is
# infohash's, metrics.Reserved); VALUE not empty, without a newline. It is
# checked first: a bad one leaves no name to write the pass's gauges under
# (finish writes none, rather than the unlabelled file's).
if [ -n "${METRICS_LABEL:-}" ] && [ -n "${METRICS_DIR:-}" ]; then
	badlabel() { METRICS_DIR=''; usage "METRICS_LABEL=$METRICS_LABEL: $*"; }
	[[ $METRICS_LABEL != *$'\n'* ]] || badlabel "a newline: want NAME=VALUE,..., such as dataset=main"
	IFS=, read -r -a pairs <<<"$METRICS_LABEL"
	pl='' ms='' seen=''
	for pair in "${pairs[@]}"; do
		lname=${pair%%=*} lvalue=${pair#*=}
		[[ $pair == *=* && $lname =~ ^[a-zA-Z_][a-zA-Z0-9_]*$ && -n $lvalue ]] ||
			badlabel "$pair: want NAME=VALUE (NAME letters, digits and _, not first a digit; VALUE not empty), such as dataset=main"
		[[ $lname != __* ]] || badlabel "$lname: names starting with __ are Prometheus's own"
		case " class kind last_failure metadata_status method outcome step table tier wave " in
			*" $lname "*) badlabel "$lname is a label the series already use: name another" ;;
		esac
		case "$seen " in *" $lname "*) badlabel "$lname given twice" ;; esac
		seen+=" $lname"
		lvalue=${lvalue//\\/\\\\}
		pl+=${pl:+,}$lname=\"${lvalue//\"/\\\"}\"
		ms+=${ms:+,}$pair
	done
	mlabel=(--metrics-label "$METRICS_LABEL") plabels=$pl msuffix=.${ms//[^a-zA-Z0-9_.,=+-]/_}
fi
# Check every argument before the first step, so that a bad one does not
# cost a capture first (NOW and LIMIT are used only after it).
# INFOHASH_DATA, infohash's own --data, is not DATA_DIR: a pass run
# without one, INFOHASH_DATA set, is told how to give it.
hint=''
[ -z "${INFOHASH_DATA:-}" ] || hint=" (INFOHASH_DATA is infohash's --data, not read for DATA_DIR: crawl-pass.sh \"\$INFOHASH_DATA\")"
[ $# -ge 1 ] && [ $# -le 2 ] && [ -n "$DATA" ] || usage "usage: crawl-pass.sh DATA_DIR [CAPTURE_DURATION]$hint"
command -v -- "$IH" >/dev/null ||
	usage "no infohash binary: INFOHASH=$IH is not an executable, nor a command on PATH=$PATH; set INFOHASH=/path/to/infohash"
# It runs (not another system's build, nor a broken wrapper).
why=$("$IH" --version 2>&1 >/dev/null) ||
	usage "INFOHASH=$IH does not run: \`$IH --version\` failed${why:+ (${why%%$'\n'*})}; set INFOHASH to a working infohash"
# folder WHAT DIR: DIR is a folder, or a new one in an existing folder.
folder() {
	if [ -e "$2" ]; then
		[ -d "$2" ] || usage "$1 $2 is not a folder"
	else
		[ -d "$(dirname -- "$2")" ] || usage "$1 $2: its parent folder does not exist (a mistyped path?); create it first"
	fi
}
folder DATA_DIR "$DATA"
# DATA_DIR must be a dataset's own folder, not one inside it (state/current,
# a snapshot under state/v/): the pass would write its work/ and export/
# folders into files the dataset manages. A dataset's folder holds CURRENT.
abs=$(cd -- "$(dirname -- "$DATA")" && pwd -P) || usage "DATA_DIR $DATA: cannot resolve its folder"
up=$abs
[ -e "$DATA" ] && up=$(cd -- "$DATA" && pwd -P)
while [ "$up" != / ] && [ -n "$up" ]; do
	up=$(dirname -- "$up")
	[ -f "$up/CURRENT" ] && [ -d "$up/manifests" ] &&
		usage "DATA_DIR $DATA is inside the dataset $up: give the dataset's own folder"
done
if [ ! -e "$DATA" ] && [ -f "$abs/CURRENT" ] && [ -d "$abs/manifests" ]; then
	usage "DATA_DIR $DATA is inside the dataset $abs: give the dataset's own folder"
fi
[ "$EXPORT_DIR" = "$DATA/export" ] || folder EXPORT_DIR "$EXPORT_DIR"
# Durations as infohash takes them (90m, 1d12h, 1.5h): this refuses typos
# and leaves the finer checks (at most 100 years) to infohash.
dur='^[+]?(0|(([0-9]+[.]?[0-9]*|[.][0-9]+)(w|d|h|m|s|ms|us|µs|μs|ns))+)$'
[[ $DURATION =~ $dur ]] || usage "CAPTURE_DURATION $DURATION: want a duration such as 12m, 1h or 1d"
# capture --duration 0 means no limit: such a pass would capture until
# killed, and every later cron slot would find the lock held and skip.
[[ $DURATION =~ [1-9] ]] || usage "CAPTURE_DURATION $DURATION: want more than zero (capture would run until killed), such as 12m, 1h or 1d"
[[ $LOCK_WAIT =~ $dur ]] || usage "LOCK_WAIT=$LOCK_WAIT: want a duration such as 10m, 1h or 1d"
[[ $LIMIT =~ ^[0-9]+$ ]] || usage "LIMIT=$LIMIT: want a number of jobs, such as 5000"
keep=()
if [ -n "${KEEP:-}" ]; then
	[[ $KEEP =~ ^[1-9][0-9]*$ ]] || usage "KEEP=$KEEP: want a number of snapshots, 1 or more, such as 10"
	keep=(--keep "$KEEP")
fi
keeppasses=${KEEP_PASSES:-10}
[[ $keeppasses =~ ^[1-9][0-9]*$ ]] || usage "KEEP_PASSES=$KEEP_PASSES: want a number of pass folders, 1 or more, such as 10"
budget='' # PASS_BUDGET, in seconds
if [ -n "${PASS_BUDGET:-}" ]; then
	[[ $PASS_BUDGET =~ ^(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?$ ]] &&
		budget=$((10#${BASH_REMATCH[2]:-0} * 3600 + 10#${BASH_REMATCH[4]:-0} * 60 + 10#${BASH_REMATCH[6]:-0})) &&
		[ "$budget" -gt 0 ] ||
		usage "PASS_BUDGET=$PASS_BUDGET: want more than zero in whole hours, minutes and seconds, such as 14m or 1h30m"
fi
# EXPORT_EVERY: exportevery, in minutes; '' every pass; never.
exportevery=''
case ${EXPORT_EVERY:-} in
	'') ;;
	never) exportevery=never ;;
	*) [[ $EXPORT_EVERY =~ ^(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?$ ]] &&
		exportevery=$((10#${BASH_REMATCH[2]:-0} * 1440 + 10#${BASH_REMATCH[4]:-0} * 60 + 10#${BASH_REMATCH[6]:-0})) &&
		[ "$exportevery" -gt 0 ] ||
		usage "EXPORT_EVERY=$EXPORT_EVERY: want more than zero in whole days, hours and minutes, such as 55m, 6h or 1d; or never" ;;
esac
command -v flock >/dev/null ||
	usage "no flock(1) on PATH=$PATH: the pass takes its lock with it (util-linux; macOS: brew install flock)"
# METRICS_DIR, where capture, the first step, writes its gauges: a
# missing one failed capture (exit 2) in every pass.
if [ -n "${METRICS_DIR:-}" ] && { [ ! -d "$METRICS_DIR" ] || [ ! -w "$METRICS_DIR" ]; }; then
	usage "METRICS_DIR=$METRICS_DIR is not a folder this pass can write in: create it (node_exporter's --collector.textfile.directory) or unset METRICS_DIR"
fi
# NOW: a time infohash's --now takes, as infohash parses it (its "clock"
# command reads no dataset); date(1) cannot say: -d is GNU's alone.
if [ -n "${NOW:-}" ]; then
	why=$("$IH" clock --now "$NOW" 2>&1 >/dev/null) ||
		usage "NOW=$NOW: want an RFC 3339 time such as 2026-01-02T03:04:05Z${why:+ (${why%%$'\n'*})}"
	# The wall clock as the pass's clock reads NOW (infohash's, in
	# fractions of a second: date +%N is GNU's alone).
	start=$("$IH" clock) || usage "$IH clock: cannot read the wall clock"
fi
# A folder the pass cannot make (a read-only or full disk, permissions) is
# an operational failure, not a usage error: exit 1, on one line that
# says why (mkdir's and bash's own lines went before it).
why=$(mkdir -p -- "$DATA" 2>&1 && mkdir -p -- "$DATA/work" "$EXPORT_DIR" 2>&1) || {
	log "cannot create $WORK or $EXPORT_DIR (${why//$'\n'/; }): failed (exit 1): stopping"
	exit 1
}
# One pass at a time over DATA_DIR, whatever runs it (cron's flock -n, or
# none; a pass by hand): the pass holds the flock(2) of
# DATA_DIR/work/.pass.lock from here to its end (and so do the steps it
# started, which inherit it), and a second pass exits 75 at once. Two
# passes at once shared a folder in the same second (one's capture,
# locked out, removed the file the other's capture wrote), or marked the
# other's empty, still written file applied.
why=$({ : >>"$DATA/work/.pass.lock"; } 2>&1) && exec {passlock}>>"$DATA/work/.pass.lock" || {
	log "cannot open $DATA/work/.pass.lock (${why##*: }): failed (exit 1): stopping"
	exit 1
}
flock -n "$passlock" || {
	log "another crawl pass holds $DATA/work/.pass.lock (an overrun, a pass run by hand, or a step a killed pass left running: fuser -v names it): skipping this pass (exit 75)"
	# The pass metrics are the running pass's to write: a 75 here would
	# stand in them, alerting, until that healthy pass ends. An overrun
	# shows as last_success/last_completed going stale.
	passlocked=1
	exit 75
}
# The pass's folder is new: a name taken (an earlier pass in the same
# second, or PASS given again) gets -2, -3, ... It is stamped with the
# next sequence number (see passorder), drawn under .pass.lock.
base=$PASS n=1
while [ -e "$WORK" ] || [ -L "$WORK" ]; do
	n=$((n + 1)) PASS=$base-$n WORK=$DATA/work/$base-$n
done
top=0
for dir in "$DATA"/work/*/; do
	seqof "${dir%/}"
	[ -z "$pseq" ] || [ "$pseq" -le "$top" ] || top=$pseq
done
mkdir -- "$WORK" || {
	log "cannot create $WORK or $EXPORT_DIR: failed (exit 1): stopping"
	exit 1
}
made=1
printf '%s\n' $((top + 1)) >"$WORK/$SEQ" || {
	log "cannot write $WORK/$SEQ: failed (exit 1): stopping"
	exit 1
}
[ "$PASS" = "$base" ] || log "$DATA/work/$base exists (an earlier pass of that name): this pass's folder is $WORK"

# tick: set now, the --now of the step about to start: with NOW, NOW plus
# the wall-clock time elapsed since the pass began (infohash clock
# --started), as a clock that started at NOW reads; capture and fetch run
# on from it at the wall clock's pace. Every step on one clock: what
# capture stamps is not after the --now of the dedup that folds it in (the
# same NOW for every step read a long capture's later sightings as future
# times, and clamped them), and a hash a sighting makes due is due for
# the plan-retries after it (not a pass later), as in a pass without NOW.
now=()
tick() {
	[ -n "${NOW:-}" ] || return 0
	local t
	# A signal to the whole pass may end clock too: interrupted, not failed.
	t=$("$IH" clock --now "$NOW" --started "$start") || { [ -z "$sig" ] || stopped clock 130; stopped clock 1; }
	now=(--now "$t")
}
boot=()
[ -n "${BOOTSTRAP+set}" ] && boot=(--bootstrap "$BOOTSTRAP")

# kept NAME: what a failed (or killed) capture or fetch leaves, for the
# line that stops the pass: its stream's whole batches, which the next
# pass applies (catch-up), and, for fetch, the leases of the jobs whose
# results are not in it, which hold until lease_until (then the hashes
# are planned again).
kept() {
	local out=observations.arrows until
	case $1 in
		capture) ;;
		fetch) out=results.arrows ;;
		*) return 0 ;;
	esac
	if [ -s "$WORK/$out" ]; then
		printf '; the next pass applies what it wrote, %s' "$WORK/$out"
	else
		printf '; it wrote nothing to apply'
	fi
	until=$(cat -- "$WORK/jobs.parquet.lease_until" 2>/dev/null) || until=
	[ "$1" = capture ] || printf '; the jobs it did not finish stay leased until %s, then are planned again' "${until:-their lease_until}"
}

# stopped NAME RC: the log line for a status that ends the pass, then exit.
# Each step's exit 75 names its own lock: capture and fetch lock their
# files in DATA_DIR/dht-state, the others the dataset (a pass holds none
# of these between its steps, only its own DATA_DIR/work/.pass.lock). A fetch refused so (before it read a job)
# puts the pass's jobs file back at JOBS, where the next pass fetches it,
# with the end of its leases beside it (JOBS.lease_until), unless its plan
# held no job: then there is nothing to fetch, and the next pass plans.
stopped() {
	case $2 in
		75) case $1 in
			# Locked out before it read or captured anything: its
			# output (an empty stream) holds nothing to apply, its
			# --stats-json only {"exit_status": 75}.
			capture) rm -f -- "$WORK/observations.arrows" "$WORK/capture.json"
				log "capture: $DATA/dht-state is in use by another capture (exit 75): skipping this pass" ;;
			fetch) rm -f -- "$WORK/results.arrows"
				if [ -f "$WORK/plan.json" ] && [ "$(statsval planned "$WORK/plan.json")" = 0 ]; then
					log "fetch: $DATA/dht-state is in use by another fetch (exit 75): its plan has no jobs, so none go back for the next pass, which plans afresh; skipping the rest of this pass"
				elif [ ! -e "$JOBS" ] && { [ ! -f "$WORK/jobs.parquet.lease_until" ] || mv -f -- "$WORK/jobs.parquet.lease_until" "$JOBS.lease_until"; } &&
					mv -- "$WORK/jobs.parquet" "$JOBS"; then
					log "fetch: $DATA/dht-state is in use by another fetch (exit 75): its jobs, still leased, go back to $JOBS for the next pass to fetch; skipping the rest of this pass"
				else
					log "fetch: $DATA/dht-state is in use by another fetch (exit 75): skipping the rest of this pass; its jobs in $WORK/jobs.parquet stay leased until their lease_until"
				fi ;;
			*) log "$1: dataset locked by another writer (exit 75): skipping this pass" ;;
		esac ;;
		130) log "$1: interrupted (exit 130)" ;;
		2) log "$1: bad input or usage (exit 2): stopping; fix and re-run" ;;
		*) log "$1: failed (exit $2): stopping$(kept "$1")" ;;
	esac
	# Monitoring still learns what the dataset looks like when a step
	# stops the pass (a bad DIR/blocklist stops plan-retries: status's
	# blocklist_unreadable says why), unless the pass was interrupted or
	# status itself is what stopped. Its own failure changes nothing here.
	if [ -n "${METRICS_DIR:-}" ] && [ "$2" != 130 ] && [ "$1" != status ] && [ -e "$DATA/CURRENT" ]; then
		"$IH" status --data "$DATA" "${now[@]}" ${METRICS_DIR:+"$(metrics status)"} "${mlabel[@]}" >/dev/null 2>&1 || true
	fi
	exit "$2"
}

# step NAME CMD...: run a step; decide from its exit status whether to go on.
step() {
	local name=$1; shift
	log "$name: $(quoted "$@")"
	run "$@"
	local rc=$?
	[ -z "$sig" ] || stopped "$name" 130
	case $rc in
		0) return 0 ;;
		3) log "$name: partial (exit 3): committed what was done; going on"; partial=1; return 0 ;;
		*) stopped "$name" "$rc" ;;
	esac
}

# statsval NAME FILE: the value of NAME, a number or a string, in FILE, a
# --stats-json file (one "name": value a line); nothing when it has none.
statsval() { sed -n 's/^[[:space:]]*"'"$1"'":[[:space:]]*"\{0,1\}\([^",]*\).*/\1/p' "$2"; }

# backlog: after this pass's plan, one WARN line when it and the two
# plans before it (the newest pass folders holding a plan.json) each left
# more than 10 x LIMIT due hashes unplanned (due_unplanned): at this LIMIT
# the backlog does not drain. A plan.json without it (an older infohash,
# a failed plan) ends the run of plans.
backlog() {
	local i n left=() most=$((10#$LIMIT * 10))
	[ "$most" -gt 0 ] || return 0
	passorder
	for ((i = ${#passes[@]} - 1; i >= 0 && ${#left[@]} < 3; i--)); do
		[ -f "${passes[i]}/plan.json" ] || continue
		n=$(statsval due_unplanned "${passes[i]}/plan.json")
		[[ $n =~ ^[0-9]{1,18}$ ]] && [ "$((10#$n))" -gt "$most" ] || return 0
		left+=("$((10#$n))")
	done
	[ ${#left[@]} = 3 ] || return 0
	log "plan-retries: WARN: the last 3 plans each left more than 10 x LIMIT ($most) due hashes unplanned (due_unplanned ${left[*]}, newest first): at LIMIT=$LIMIT the backlog does not drain; raise LIMIT (within what fetch attempts in a lease: plan-retries warns past it) or run passes more often"
}

# pending FILE: FILE is there and not yet applied.
pending() { [ -f "$1" ] && [ ! -e "$1.applied" ]; }

# apply NAME FILE ASIDE CMD...: run step NAME (dedup or merge), which
# folds FILE into the dataset, and mark FILE applied when it did. Bad input
# that the error names is moved to the folder ASIDE and the pass goes on;
# exit 2 for anything else (a usage error) stops it. A partial run (exit 3)
# leaves FILE unmarked: the next pass applies it again.
apply() {
	local name=$1 file=$2 aside=$3; shift 3
	local errf=$WORK/.$name.stderr
	if [ ! -s "$file" ]; then
		# Empty, but its writer (capture, fetch) may still hold it: a
		# step of a killed pass that runs on. It is not marked then.
		local held=0
		flock -n -s -E 75 "$file" true 2>/dev/null || held=$?
		if [ "$held" = 75 ]; then
			log "$name: $file is empty and still being written (its writer holds its lock): left for a later pass"
			partial=1
			return 0
		fi
		log "$name: $file is empty (its step stopped before it wrote anything): nothing to apply"
		: >"$file.applied" && rm -f -- "$file"
		return 0
	fi
	log "$name: $(quoted "$@")"
	# stderr is copied to errf to see what exit 2 was about; the copy
	# ignores SIGINT and SIGTERM so that it outlives a step that commits
	# after a signal, and never cuts its log short.
	local fd tee rc named=0
	exec {fd}> >(trap '' INT TERM; exec tee "$errf" >&2)
	tee=$!
	run "$@" 2>&"$fd"
	rc=$?
	exec {fd}>&-
	reap "$tee"
	grep '^infohash: ' "$errf" | grep -qF -- "$file" && named=1
	rm -f -- "$errf"
	[ "$catchup" = 0 ] || caughtup "$name" "$rc"
	case $rc in
		# Applied (committed, synced): the file goes, its marker stays,
		# so nothing applies it again (an .arrows is ~160 B a row).
		0) : >"$file.applied" && rm -f -- "$file" ;;
		3) log "$name: partial (exit 3): committed what was done; the next pass applies $file again"; partial=1 ;;
		2) [ $named = 1 ] || stopped "$name" 2
			local pass=${file%/*}
			local kept=$aside/crawl-pass-${pass##*/}-${file##*/}.bad
			{ mkdir -p -- "$aside" && mv -f -- "$file" "$kept"; } || stopped "$name" 1
			log "$name: bad input (exit 2): set aside as $kept (not applied; \`infohash status\` lists it): look at it, then delete it or apply it by hand"
			bad=1 ;;
		1) [ "$catchup" = 1 ] || stopped "$name" 1
			log "$name: failed (exit 1) on $file, left by an earlier pass: left for the next pass; going on with this one"
			partial=1 ;;
		*) stopped "$name" "$rc" ;;
	esac
	[ -z "$sig" ] || stopped "$name" 130
}

# caughtup STEP RC: a catch-up run of STEP ended with RC: keep the worst
# status (1, then 2, 130, 75, 3, 0) and count the files applied.
caughtup() {
	local worst=cu_exit_$1 n=cu_in_$1
	[ "$2" != 0 ] || printf -v "$n" %d $((${!n} + 1))
	[ "$(severity "$2")" -le "$(severity "${!worst}")" ] || printf -v "$worst" %d "$2"
}
severity() { case $1 in 0) echo 0 ;; 3) echo 1 ;; 75) echo 2 ;; 130) echo 3 ;; 2) echo 4 ;; *) echo 5 ;; esac; }

# reports STEP FILE: the --stats-json and --metrics-file flags of a run of
# STEP on FILE. The pass's own run writes FILE's folder's STEP.json and
# METRICS_DIR/infohash_STEP.prom; a catch-up run (an earlier pass's FILE)
# writes both into this pass's folder, as catchup-STEP-PASS.json and .prom,
# so that it replaces neither that pass's record of its own run nor the
# STEP.prom of this pass's run (a catch-up that failed, then the pass's
# own run exiting 0, left exit_status 0; infohash_crawl_pass.prom's
# catchup_exit_status says it).
reports() {
	if [ "$catchup" = 0 ]; then
		printf '%s\n' --stats-json "${2%/*}/$1.json" ${METRICS_DIR:+"$(metrics "$1")"} "${mlabel[@]}"
		return
	fi
	local at=${2%/*}
	at=$WORK/catchup-$1-${at##*/}
	printf '%s\n' --stats-json "$at.json"
	[ -z "${METRICS_DIR:-}" ] || printf '%s\n' "--metrics-file=$at.prom" "${mlabel[@]}"
}
dedup() { # dedup FILE: apply the observations in FILE
	local r
	tick
	mapfile -t r < <(reports dedup "$1")
	apply dedup "$1" "$DATA/inbox" \
		"$IH" dedup --data "$DATA" "${now[@]}" "${keep[@]}" --lock-wait "$LOCK_WAIT" --announced-peers \
		"${r[@]}" "$1"
}
merge() { # merge FILE: apply the fetch results in FILE
	local r
	tick
	mapfile -t r < <(reports merge "$1")
	apply merge "$1" "$DATA/inbox/merge" \
		"$IH" merge --data "$DATA" "${now[@]}" "${keep[@]}" --lock-wait "$LOCK_WAIT" \
		"${r[@]}" "$1"
}
# The work files of each kind, older passes' Parquet first: a pass
# folder holds one or the other (both only when a pass was run again
# under its name across the upgrade).
OBS=(observations.parquet observations.arrows)
RES=(results.parquet results.arrows)

# What earlier passes (and an earlier run of this PASS) left unapplied.
# One that fails with exit 1 stays for the next pass, and this pass goes
# on: a file that keeps failing must not stop every later capture.
# Results wait while DATA_DIR holds no dataset (no CURRENT: a new
# DATA_DIR whose first dedup committed nothing, which removes the dataset
# it made): merge makes none, and would fail on the folder before it read
# the file, so neither apply it nor tell it from bad input. They are
# applied once this pass's dedup has made the dataset (see late below).
late=()
catchup=1
passorder
for dir in "${passes[@]}"; do
	for f in "${OBS[@]}"; do
		if pending "$dir/$f"; then
			log "catch-up: ${dir##*/}'s observations ($f) were not applied"
			dedup "$dir/$f"
		fi
	done
	for f in "${RES[@]}"; do
		pending "$dir/$f" || continue
		if [ -f "$DATA/CURRENT" ]; then
			log "catch-up: ${dir##*/}'s fetch results ($f) were not applied"
			merge "$dir/$f"
		else
			log "catch-up: ${dir##*/}'s fetch results ($f) were not applied; $DATA holds no dataset yet: they wait for this pass's dedup to make it"
			late+=("$dir/$f")
		fi
	done
done
catchup=0
for f in "${OBS[@]}" "${RES[@]}"; do
	rm -f -- "$WORK/$f.applied"
done

tick
# shellcheck disable=SC2086 # CAPTURE_ARGS and FETCH_ARGS are word lists
to=$WORK/observations.arrows
step capture "$IH" capture --data "$DATA" "${now[@]}" "${boot[@]}" --duration "$DURATION" ${CAPTURE_ARGS:-} \
	--stats-json "$WORK/capture.json" ${METRICS_DIR:+"$(metrics capture)"} "${mlabel[@]}" -o -
dedup "$WORK/observations.arrows"
# late: the earlier passes' results that waited for a dataset. Still none
# (this pass's observations were bad input): they stay for a later pass.
if [ ${#late[@]} -gt 0 ]; then
	if [ -f "$DATA/CURRENT" ]; then
		catchup=1
		for f in "${late[@]}"; do
			dir=${f%/*}
			log "catch-up: ${dir##*/}'s fetch results (${f##*/}), now that $DATA holds a dataset"
			merge "$f"
		done
		catchup=0
	else
		waiting=()
		for f in "${late[@]}"; do
			dir=${f%/*}
			waiting+=("${dir##*/}")
		done
		log "catch-up: $DATA still holds no dataset: the fetch results of ${waiting[*]} stay for a later pass"
		partial=1
	fi
fi

# plan-retries writes to the same path in every pass, JOBS, and the pass
# moves the file into its folder at once: a plan-retries killed between
# its commit and its rename leaves its jobs under a temporary name beside
# JOBS, and the next plan-retries to JOBS ends their leases and plans the
# hashes again (to a new path each pass they stayed leased to no one for
# the lease's length). A file at JOBS is one a pass published and did not
# move (killed before the move; or plan-retries failed, or was
# interrupted, after its commit), or one whose fetch found DATA_DIR/
# dht-state locked and put back unread: its leases are live, so this pass
# fetches it in place of a new plan. A job whose lease has passed since,
# fetch neither attempts nor releases (the pass ends partial), and plan
# plans it again. So a file whose leases have all ended by this pass's
# clock (JOBS.lease_until, the plan's lease_until, which the pass writes
# beside JOBS after its plan-retries, says when: a pass that came after
# it, cron paused) is dropped: this pass plans afresh, and plan-retries
# plans those hashes again as their leases ended.
JOBS=$DATA/work/jobs.parquet
if "$IH" plan-retries --help >/dev/null 2>&1; then
	rm -f -- "$WORK/jobs.parquet.lease_until"
	if [ -f "$JOBS" ] && [ -f "$JOBS.lease_until" ]; then
		tick
		t=${now[1]:-}
		[ -n "$t" ] || t=$("$IH" clock) || { [ -z "$sig" ] || stopped clock 130; stopped clock 1; }
		until=$(cat -- "$JOBS.lease_until") || stopped plan-retries 1
		# RFC 3339 in UTC, as infohash clock prints it: to the second,
		# they compare as strings.
		if [[ ${until%%[.Z]*} < ${t%%[.Z]*} ]]; then
			log "plan-retries: $JOBS, a jobs file a stopped pass left unfetched, holds only leases that ended at $until (this pass's clock: $t): dropping it and planning afresh (plan-retries plans those hashes again)"
			rm -f -- "$JOBS" || stopped plan-retries 1
		fi
	fi
	# A file at JOBS without JOBS.lease_until (a pass killed between its
	# plan and writing it, or an empty plan, which has none) says nothing
	# of when its leases end: stale, planned over (--replace ends its
	# leases, and plans their hashes again).
	replace=()
	if [ -f "$JOBS" ] && [ ! -f "$JOBS.lease_until" ]; then
		log "plan-retries: $JOBS, a jobs file a stopped pass left unfetched, has no $JOBS.lease_until to say when its leases end: planning afresh over it (--replace ends them, and plans those hashes again)"
		replace=(--replace)
	fi
	if [ -f "$JOBS" ] && [ ${#replace[@]} = 0 ]; then
		log "plan-retries: $JOBS is a jobs file a stopped pass left unfetched: fetching it in this pass in place of a new plan"
	else
		rm -f -- "$JOBS.lease_until"
		tick
		step plan-retries "$IH" plan-retries --data "$DATA" "${now[@]}" "${keep[@]}" --lock-wait "$LOCK_WAIT" --limit "$LIMIT" "${replace[@]}" \
			--stats-json "$WORK/plan.json" ${METRICS_DIR:+"$(metrics plan_retries)"} "${mlabel[@]}" -o "$JOBS"
		until=$(statsval lease_until "$WORK/plan.json")
		if [ -n "$until" ] && until=$("$IH" clock --far-now --now "$until"); then
			printf '%s\n' "$until" >"$JOBS.lease_until" || stopped plan-retries 1
		fi
		backlog
	fi
	# The record leaves JOBS after the jobs file (copied before, removed
	# after): a pass killed between the two leaves both for the next.
	if [ -f "$JOBS.lease_until" ]; then
		cp -f -- "$JOBS.lease_until" "$WORK/jobs.parquet.lease_until" || stopped plan-retries 1
	fi
	mv -f -- "$JOBS" "$WORK/jobs.parquet" || stopped plan-retries 1
	rm -f -- "$JOBS.lease_until"
	# fetch shares capture's DHT state directory (its own files there) to
	# start warm from the nodes that answered it last pass. With
	# PASS_BUDGET, its --deadline is what is left of it (at least 1s:
	# --deadline 0 is none), unless FETCH_ARGS sets one.
	deadline=()
	if [ -n "$budget" ] && [[ " ${FETCH_ARGS:-} " != *" --deadline"[\ =]* ]]; then
		ms=$((budget * 1000 - (${EPOCHREALTIME/./} - began) / 1000))
		if [ $ms -lt 1000 ]; then
			log "fetch: PASS_BUDGET=$PASS_BUDGET is spent: fetch gets --deadline 1s, and releases the jobs it does not start"
			ms=1000
		fi
		deadline=(--deadline "${ms}ms")
	fi
	tick
	# shellcheck disable=SC2086
	to=$WORK/results.arrows
	step fetch "$IH" fetch "${now[@]}" "${boot[@]}" --dht-state "$DATA/dht-state" "${deadline[@]}" ${FETCH_ARGS:-} --stats-json "$WORK/fetch.json" ${METRICS_DIR:+"$(metrics fetch)"} "${mlabel[@]}" \
		"$WORK/jobs.parquet" -o -
	merge "$WORK/results.arrows"
fi

# An export that fails (a full or read-only export disk) stops nothing
# else: status and the tidy-up below still run (monitoring stays, work/
# does not grow), and the pass then ends with its exit status.
# EXPORT_EVERY skips it while the last export (EXPORTED: the wall-clock
# second its pass began, and its name) is younger, in whole minutes of
# the passes' starts; a record from a later minute (a clock set back)
# or unreadable is none.
EXPORTED=$DATA/work/export.last
exportrc=0 skip=''
if [ "$exportevery" = never ]; then
	skip="EXPORT_EVERY=never"
elif [ -n "$exportevery" ] && [ -f "$EXPORT_DIR/catalog.parquet" ] && [ -f "$EXPORTED" ] &&
	read -r lastsec lastpass <"$EXPORTED" && [[ $lastsec =~ ^[0-9]{1,12}$ ]]; then
	ago=$((${began%??????} / 60 - 10#$lastsec / 60))
	[ $ago -lt 0 ] || [ $ago -ge "$exportevery" ] ||
		skip="pass ${lastpass:-?} exported $ago minutes before this one began, less than EXPORT_EVERY=$EXPORT_EVERY"
fi
if [ -n "$skip" ]; then
	log "export: skipped ($skip): the last export's $EXPORT_DIR/catalog.parquet${METRICS_DIR:+ and $METRICS_DIR/infohash_export$msuffix.prom} left as they are"
else
	# --replace: each export replaces the last pass's catalog.parquet.
	ex=("$IH" export --data "$DATA" --table catalog --format parquet --replace \
		${METRICS_DIR:+"$(metrics export)"} "${mlabel[@]}" -o "$EXPORT_DIR/catalog.parquet")
	log "export: $(quoted "${ex[@]}")"
	run "${ex[@]}"
	exportrc=$?
	[ -z "$sig" ] || stopped export 130
	[ $exportrc = 0 ] || log "export: failed (exit $exportrc): what the steps did is committed; status and the tidy-up go on; the pass ends $exportrc"
	# Written aside and renamed: a pass killed meanwhile leaves the last
	# record whole. One not written makes the next pass export again.
	if [ $exportrc = 0 ] && [ -n "$exportevery" ]; then
		{ printf '%s %s\n' "${began%??????}" "$PASS" >"$EXPORTED.tmp" && mv -f -- "$EXPORTED.tmp" "$EXPORTED"; } 2>/dev/null || {
			rm -f -- "$EXPORTED.tmp"
			log "export: cannot write $EXPORTED: the next pass exports again"
		}
	fi
fi
tick
run "$IH" status --data "$DATA" "${now[@]}" ${METRICS_DIR:+"$(metrics status)"} "${mlabel[@]}" >&2
statusrc=$?
[ -z "$sig" ] || stopped status 130
# A status that fails (exit 1: it cannot read the dataset) undoes nothing
# the steps committed: the pass tidies up as usual, then exits with it.
[ $statusrc = 0 ] || log "status: failed (exit $statusrc): what the steps did is committed; the pass ends $statusrc"

# Keep the folders of the last KEEP_PASSES passes for inspection, and of
# any pass with a file left to apply.
passorder
old=$((${#passes[@]} - keeppasses))
[ $old -gt 0 ] || old=0
for dir in "${passes[@]:0:old}"; do
	left=0
	for f in "${OBS[@]}" "${RES[@]}"; do
		pending "$dir/$f" && left=1
	done
	[ $left = 1 ] || rm -rf -- "$dir"
done
log "done$([ $bad = 1 ] && echo ' (bad input set aside)')$([ $partial = 1 ] && echo ' (partial)')$([ $exportrc = 0 ] || echo ' (export failed)')$([ $statusrc = 0 ] || echo ' (status failed)')"
[ $statusrc = 0 ] || exit $statusrc
[ $exportrc = 0 ] || exit $exportrc
[ $bad = 1 ] && exit 2
[ $partial = 1 ] && exit 3
exit 0
