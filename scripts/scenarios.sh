# Shared by scripts/killsweep.sh and scripts/fsaudit.sh: the offline writer
# scenarios (see killsweep.sh's comment) and the datasets they start from.
# Source it once IH (bin/infohash), SG (bin/stategen), P (the folder to
# prepare in, made) are set and lib.sh is sourced; then prepare_scenarios
# NAME (NAME: the script, for its messages) makes the inputs and datasets.
# It defines SCEN (the scenario names, in order), PREPOF and CMDOF (by
# name: the dataset each starts from, "-" for none, and its command),
# cmdline NAME W and fresh NAME W.

T0=2026-03-01T00:00:00Z T0B=2026-03-01T01:00:00Z T1=2026-03-02T00:00:00Z
T1B=2026-03-02T06:00:00Z T3=2026-03-05T00:00:00Z T4=2026-03-06T00:00:00Z

ih() { "$IH" "$@" 2>>"$P/prep.log" || die "prep: infohash $* failed; see $P/prep.log"; }
# hashes SEED N FIRST: N hex hashes of prefixes 00-03 (awk's rand, seeded).
hashes() { awk -v seed="$1" -v n="$2" -v f="$3" 'BEGIN { srand(seed); for (i = f; i < f + n; i++) {
	s = sprintf("%02x", i % 4); for (j = 0; j < 19; j++) s = s sprintf("%02x", int(rand() * 256)); print s } }'; }
# round DS NOW LIMIT NAME: plan-retries → jobs, stategen's answers → results.
round() {
	ih plan-retries --data "$1" --now "$2" --limit "$3" -o "$P/$4.jobs.parquet"
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
}

# scenario NAME PREP CMD...: in CMD, @D@ is the dataset, @W@ the run's folder.
SCEN=()
declare -A PREPOF CMDOF
scenario() { SCEN+=("$1"); PREPOF[$1]=$2; shift 2; CMDOF[${SCEN[-1]}]="$*"; }
scenario dedup-new - dedup --data @D@ --now "$T0" "$P/all.txt"
scenario dedup-splice ds0 dedup --data @D@ --now "$T0B" --batch-hashes 300 "$P/list-a.txt" "$P/list-b.txt"
scenario dedup-thaw cold dedup --data @D@ --now "$T4" "$P/thaw.txt"
scenario plan ds1 plan-retries --data @D@ --now "$T1B" --limit 200 -o @W@/jobs.parquet
scenario merge-splice splice merge --data @D@ --now "$T1B" "$P/splice.parquet"
scenario merge-full full merge --data @D@ --now "$T1" "$P/full.parquet"
scenario merge-archive archive merge --data @D@ --now "$T3" "$P/archive.parquet"
scenario export cold export --data @D@ --table state --format csv --replace -o @W@/state.csv

# cmdline NAME W: the scenario's command for run folder W, as words.
cmdline() { local c=${CMDOF[$1]//@D@/$2/D}; echo "${c//@W@/$2}"; }
# fresh NAME W: W holds a new copy of the scenario's dataset (none: no D).
fresh() {
	rm -rf "$2" && mkdir -p "$2"
	[ "${PREPOF[$1]}" = - ] || cp -R "$P/${PREPOF[$1]}" "$2/D"
}
