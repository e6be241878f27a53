#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the repository's modules (the root
# one and tools/duckcheck, a module of its own) for FUZZTIME each (make fuzz).
#
#   scripts/fuzz.sh                      # 20s each, every module
#   FUZZTIME=2m scripts/fuzz.sh          # longer
#   FUZZTIME=2m scripts/fuzz.sh ./formats/rowio   # one package
#   scripts/fuzz.sh ./tools/duckcheck/...          # a pattern within a module
#
# A PACKAGE argument is a path from the repository's root (./...
# patterns allowed); it is listed in the module that holds it.
#
# A package whose tests do not compile fails the run: its fuzz targets
# would otherwise be skipped unseen. A failing input is written to the
# package's testdata/fuzz/ by go test and stops the run. Go 1.26's fuzz
# coordinator can also fail a target with a bare "context deadline
# exceeded" at the end of -fuzztime, with no input (golang/go#75804, fixed
# in Go 1.27): that is reported and skipped.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

FUZZTIME=${FUZZTIME:-20s}
FUZZMINIMIZE=${FUZZMINIMIZE:-200x} # Go's default, 60 s per new input, left little time to fuzz
GO=${GO:-go}
log=$(mktemp "${TMPDIR:-/tmp}/infohash-fuzz.XXXXXX") # a template: GNU's and BSD's mktemp agree on that form
trap 'rm -f "$log"' EXIT

# The modules, the root one (.) first: go list ./... in one module does
# not reach into another.
modules=(.)
while IFS= read -r m; do
	m=${m%/go.mod}
	m=${m#./}
	[ "$m" = . ] || modules+=("$m")
done < <(find . -name go.mod -type f ! -path '*/testdata/*' ! -path './bin/*' | sort)

# module_of PATH: the innermost module holding PATH (a path from the root).
module_of() {
	local p=${1#./} best=. m
	for m in "${modules[@]}"; do
		if [ "$m" != . ] && { [ "$p" = "$m" ] || [ "${p#"$m"/}" != "$p" ]; }; then
			best=$m
		fi
	done
	echo "$best"
}

# fuzz_module MODULE PATTERN...: runs the fuzz targets of the packages
# PATTERNs (paths from MODULE's folder) match.
fuzz_module() {
	local mod=$1 pkgs pkg tests f
	shift
	pkgs=$(cd "$mod" && "$GO" list "$@") || die "go list $* failed in module $mod"
	for pkg in $pkgs; do
		if ! tests=$(cd "$mod" && "$GO" test -list '^Fuzz' "$pkg" 2>"$log"); then
			echo "$tests"
			cat "$log"
			die "cannot list the tests of $pkg (module $mod): do they compile?"
		fi
		for f in $(echo "$tests" | grep '^Fuzz' || true); do
			echo "== $pkg $f"
			if (cd "$mod" && "$GO" test "$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZE") >"$log" 2>&1; then
				tail -1 "$log"
				targets=$((targets + 1))
				continue
			fi
			if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
				echo "   (no failing input: the Go fuzz coordinator's deadline race, golang/go#75804; skipped)"
				flakes=$((flakes + 1))
				continue
			fi
			cat "$log"
			die "$f in $pkg failed"
		done
	done
}

targets=0
flakes=0
for mod in "${modules[@]}"; do
	pats=()
	if [ $# -eq 0 ]; then
		pats=(./...)
	else
		for a in "$@"; do
			[ "$(module_of "$a")" = "$mod" ] || continue
			a=${a#./}
			[ "$mod" = . ] || a=${a#"$mod"}
			a=${a#/}
			pats+=("./${a:-.}")
		done
	fi
	[ ${#pats[@]} -gt 0 ] || continue
	fuzz_module "$mod" "${pats[@]}"
done
echo "fuzz: every target ran for $FUZZTIME: $targets passed, $flakes ended by the coordinator's deadline race"
