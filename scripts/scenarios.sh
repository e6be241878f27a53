# Shared by scripts/killsweep.sh and scripts/fsaudit.sh: the offline writer
# scenarios (see killsweep.sh's comment) and the datasets they start from.
# Source it once IH (bin/infohash), SG (bin/stategen), P (the folder to
# prepare in, made) are set and lib.sh is sourced; then prepare_scenarios
# NAME (NAME: the script, for its messages) makes the inputs and datasets.
# It defines SCEN (the scenario names, in order), PREPOF and CMDOF (by
# name: the dataset each starts from, "-" for none, and its command),
# cmdline NAME W and fresh NAME W. ONLY (the scenarios chosen, by name;
# empty: all) says which datasets to prepare.
# The migration scenarios (MIGSCEN) are opt-in: OLD_BIN names a
# bin/infohash of an older dataset format (built from history: git
# worktree add /tmp/old COMMIT, go build -o bin/infohash ./cmd/infohash
# there). It prepares their datasets (old-*), so the step's Open migrates
# the point's copy to the current format, drawing the copy's dataset_id in
# the same commit, before the step's own. Without OLD_BIN they are left
# out, which prepare_scenarios says in one line; so are their datasets when
# ONLY names none of them (OLD_BIN's dedup, plan and merge: a sweep of
# other scenarios would wait for them).

T0=2026-03-01T00:00:00Z T0B=2026-03-01T01:00:00Z T1=2026-03-02T00:00:00Z
T1B=2026-03-02T06:00:00Z T3=2026-03-05T00:00:00Z T4=2026-03-06T00:00:00Z
T5=2026-03-10T00:00:00Z

ih() { "$IH" "$@" 2>>"$P/prep.log" || die "prep: infohash $* failed; see $P/prep.log"; }
# hashes SEED N FIRST: N hex hashes of prefixes 00-03 (awk's rand, seeded).
hashes() { awk -v seed="$1" -v n="$2" -v f="$3" 'BEGIN { srand(seed); for (i = f; i < f + n; i++) {
	s = sprintf("%02x", i % 4); for (j = 0; j < 19; j++) s = s sprintf("%02x", int(rand() * 256)); print s } }'; }
# round DS NOW LIMIT NAME [RUN]: plan-retries → jobs, stategen's answers →
# results; RUN (ih, or oih: OLD_BIN's) runs plan-retries.
round() {
	"${5:-ih}" plan-retries --data "$1" --now "$2" --limit "$3" -o "$P/$4.jobs.parquet"
	"$SG" -jobs "$P/$4.jobs.parquet" -results "$P/$4.parquet" -seed 3 2>>"$P/prep.log" || die "prep: stategen -jobs failed"
}
# prepare_scenarios NAME: the inputs and prepared datasets, in $P.
prepare_scenarios() {
	say "$1: preparing datasets in $P"
	hashes 7 3000 0 >"$P/all.txt"
	{ sed -n '1,200p' "$P/all.txt"; hashes 8 200 0; } >"$P/list-a.txt"
	{ sed -n '1001,1200p' "$P/all.txt"; hashes 9 200 1; } >"$P/list-b.txt"
	ih dedup --data "$P/ds0" --now "$T0" "$P/all.txt"
	# A 30-day first backoff: the cold hashes' retries are not yet due at T4, so
	# that a sighting moves them (reactivated), not just makes them hot.
	ih policy set --data "$P/ds0" archive.min_attempts=1 archive.unseen=2d backoff.no_peers=30d backoff.no_ut_metadata=30d
	cp -R "$P/ds0" "$P/full" && round "$P/full" "$T1" 2000 full
	cp -R "$P/full" "$P/ds1" && ih merge --data "$P/ds1" --now "$T1" "$P/full.parquet"
	cp -R "$P/ds1" "$P/splice" && round "$P/splice" "$T1B" 200 splice
	cp -R "$P/ds1" "$P/archive" && round "$P/archive" "$T3" 100 archive
	cp -R "$P/archive" "$P/cold" && ih merge --data "$P/cold" --now "$T3" "$P/archive.parquet"
	# 300 cold hashes (failed, dormant since T0: archived) and 100 hot new ones.
	"$IH" export --data "$P/cold" --table state --tier cold --format csv -o - 2>>"$P/prep.log" |
		sed -n '2,301p' | cut -d, -f1 >"$P/thaw.txt"
	"$IH" export --data "$P/cold" --table state --tier hot --status new --format csv -o - 2>>"$P/prep.log" |
		sed -n '2,101p' | cut -d, -f1 >>"$P/thaw.txt"
	[ "$(wc -l <"$P/thaw.txt")" -eq 400 ] || die "prep: expected 400 cold and hot new hashes in $P/thaw.txt"
	local listed
	listed=$(date +%s) # the last input list is written (see the end)
	# plan-cold's: a second round of 100 jobs planned beside the archive
	# round's, before any hash is cold, so the cold sweep's cursor stays 0
	# (a plan commit moves it only once there are cold hashes) and the next
	# pass's window (00-0f) holds all four partitions; the archive round's
	# results merged (2000 hashes go cold, into cold files), then the
	# second's under a 1-day backoff: its 100 go cold in place (cold rows
	# in hot files), due at T5 with the 100 cold-file hashes whose 10-minute
	# retry was due already, while 900 never-tried hashes stay hot. Shares
	# of 0.25 new and 0.75 cold: --limit 200 takes 50 new hashes, the 100
	# due cold-file ones and 50 of the 100 cold rows in hot files.
	cp -R "$P/archive" "$P/coldsweep" && round "$P/coldsweep" "$T3" 100 coldsweep
	ih merge --data "$P/coldsweep" --now "$T3" "$P/archive.parquet"
	ih policy set --data "$P/coldsweep" backoff.no_peers=1d backoff.no_ut_metadata=1d
	ih merge --data "$P/coldsweep" --now "$T3" "$P/coldsweep.parquet"
	ih policy set --data "$P/coldsweep" plan.new_share=0.25 plan.cold_share=0.75
	ih plan-retries --data "$P/coldsweep" --now "$T5" --limit 0 --stats-json "$P/coldsweep.dry.json"
	[ "$(json_int "$P/coldsweep.dry.json" cold_rows_in_hot_files)" = 100 ] &&
		[ "$(json_int "$P/coldsweep.dry.json" cold_sweep_start)" = 0 ] &&
		[ "$(find "$P/coldsweep/state/current/" -name 'cold-*.parquet' | wc -l)" = 4 ] ||
		die "prep: $P/coldsweep: want 100 cold rows in hot files, 4 cold files and the cold sweep at 00"
	# dedup caches an input's checksum (D/input-cache) only if the file
	# was last changed over 2 s before dedup began reading it
	# (pipeline/dedup's racyWindow). A step run sooner after its list was
	# made writes no cache, so a renameat and two fsyncs came and went
	# with how fast the preparation ran (~2.5 s here), in the traced runs
	# right after it: killsweep's dedup-new reference, fsaudit's traces.
	# Wait until every list is past that window.
	while [ $(($(date +%s) - listed)) -lt 4 ]; do sleep 1; done
	local s mig=
	for s in "${MIGSCEN[@]}"; do
		case " ${ONLY:-$s} " in *" $s "*) mig=1 ;; esac
	done
	if [ -z "${OLD_BIN:-}" ]; then
		say "$1: ${MIGSCEN[*]} skipped: OLD_BIN is unset (a bin/infohash of an older dataset format)"
	elif [ -z "$mig" ]; then
		say "$1: OLD_BIN's datasets not prepared: none of ${MIGSCEN[*]} is chosen"
	else
		prepare_old
	fi
}
oih() { "$OLD_BIN" "$@" 2>>"$P/prep.log" || die "prep: $OLD_BIN $* failed; see $P/prep.log"; }
# format DS: the format_version of dataset DS's current manifest.
format() { json_int "$1/manifests/$(cat "$1/CURRENT")" format_version; }
# prepare_old: the migration scenarios' datasets, as ds0, ds1 and splice
# are made, but by OLD_BIN (stategen's answers to its jobs).
prepare_old() {
	oih dedup --data "$P/old-ds0" --now "$T0" "$P/all.txt"
	oih policy set --data "$P/old-ds0" archive.min_attempts=1 archive.unseen=2d backoff.no_peers=30d backoff.no_ut_metadata=30d
	[ "$(format "$P/old-ds0")" -lt "$(format "$P/ds0")" ] ||
		die "prep: OLD_BIN ($OLD_BIN) writes format $(format "$P/old-ds0"), not older than $(format "$P/ds0"): nothing to migrate"
	say "prep: the migration scenarios start from format $(format "$P/old-ds0") (OLD_BIN $OLD_BIN)"
	cp -R "$P/old-ds0" "$P/old-full" && round "$P/old-full" "$T1" 2000 old-full oih
	cp -R "$P/old-full" "$P/old-ds1" && oih merge --data "$P/old-ds1" --now "$T1" "$P/old-full.parquet"
	cp -R "$P/old-ds1" "$P/old-splice" && round "$P/old-splice" "$T1B" 200 old-splice oih
}

# scenario NAME PREP CMD...: in CMD, @D@ is the dataset, @W@ the run's folder.
SCEN=()
declare -A PREPOF CMDOF
scenario() { SCEN+=("$1"); PREPOF[$1]=$2; shift 2; CMDOF[${SCEN[-1]}]="$*"; }
scenario dedup-new - dedup --data @D@ --now "$T0" "$P/all.txt"
scenario dedup-splice ds0 dedup --data @D@ --now "$T0B" --batch-hashes 300 "$P/list-a.txt" "$P/list-b.txt"
scenario dedup-thaw cold dedup --data @D@ --now "$T4" "$P/thaw.txt"
scenario plan ds1 plan-retries --data @D@ --now "$T1B" --limit 200 -o @W@/jobs.parquet
# (--keep 4: the commit Open makes on each point's copy, its new
# dataset_id, collects no snapshot, and plan's own collects one at most,
# where the default 3 would lose snapshot 5's state, peers, ledger and
# leases folders: ~40 more kill points, all after the commit, of the
# collection plan's sweep tries)
scenario plan-cold coldsweep plan-retries --data @D@ --now "$T5" --limit 200 --keep 4 -o @W@/jobs.parquet
scenario merge-splice splice merge --data @D@ --now "$T1B" "$P/splice.parquet"
scenario merge-full full merge --data @D@ --now "$T1" "$P/full.parquet"
scenario merge-archive archive merge --data @D@ --now "$T3" "$P/archive.parquet"
scenario export cold export --data @D@ --table state --format csv --replace -o @W@/state.csv
# dedup-splice's, plan's and merge-splice's steps on datasets OLD_BIN made.
MIGSCEN=(dedup-mig plan-mig merge-mig)
if [ -n "${OLD_BIN:-}" ]; then
	[ -x "$OLD_BIN" ] && [ -f "$OLD_BIN" ] || die "OLD_BIN ($OLD_BIN) is not an executable file"
	OLD_BIN=$(cd "$(dirname "$OLD_BIN")" && pwd -P)/$(basename "$OLD_BIN")
	scenario dedup-mig old-ds0 dedup --data @D@ --now "$T0B" --batch-hashes 300 "$P/list-a.txt" "$P/list-b.txt"
	scenario plan-mig old-ds1 plan-retries --data @D@ --now "$T1B" --limit 200 -o @W@/jobs.parquet
	scenario merge-mig old-splice merge --data @D@ --now "$T1B" "$P/old-splice.parquet"
fi

# cmdline NAME W: the scenario's command for run folder W, as words.
cmdline() { local c=${CMDOF[$1]//@D@/$2/D}; echo "${c//@W@/$2}"; }
# fresh NAME W: W holds a new copy of the scenario's dataset (none: no D).
fresh() {
	rm -rf "$2" && mkdir -p "$2"
	[ "${PREPOF[$1]}" = - ] || cp -R "$P/${PREPOF[$1]}" "$2/D"
}
