# killpoints.awk: make killsweep's kill points (scripts/killsweep.sh), one
# set of strace(1) options a line, from the reference run's trace (strace
# -f, a thread id first on each line). Variables (-v): every and sampled
# (syscall names, space-separated with a space at each end), max (how many
# sampled points at most), wpath (the run's folder, which a stable path's
# @W@ stands for). The lines come out unsorted: sort -u them.
#
# when=N counts per thread (per tracee): a kill at when=N fires at the
# first call that is some thread's N-th of that name, and how a run's calls
# spread over Go's threads changes from run to run (one run's most calls of
# a name on one thread was 17, the next one's 36). So N goes up to the
# calls of that name over all threads, the most any thread can make in a
# run that makes as many: the point set then depends on the calls a run
# makes, which are the same from run to run, not on how they spread. The
# points past what one thread reaches in a killed run let it complete
# (killsweep counts those): the price of a steady set.
BEGIN {
	h = "[0-9a-f]"; h8 = h h h h h h h h; d = "[0-9]"; d12 = d d d d d d d d d d d d
	# the calls whose descriptor arguments -P matches too (by the path the
	# descriptor has): for each, which arguments are ones
	split("fsync 1 fdatasync 1 syncfs 1 ftruncate 1 unlinkat 1 mkdirat 1 renameat 13 renameat2 13 linkat 13", t)
	for (i = 1; i < 18; i += 2) fdargs[t[i]] = t[i + 1]
}
# stable P: "@W@/..." if P is in the run folder and the same in every run,
# else "". A snapshot's number (12 digits: v/N, manifests/N.json, a file's
# .sN. suffix) is the same in every run; a random name is not: 8 or more
# hex digits once the snapshot numbers are out, or a staging folder
# (staging/PID-...). Only a number after "/" or ".s" is a snapshot's: a
# random name may be all digits or hold 12 in a row (.tmp-CURRENT-
# 489392474688, part-5746768666866e47), and is no path of another run.
# The run folder's own path is the same in every run (its @W@): what
# SWEEP_DIR's name holds is not looked at.
function stable(p, q) {
	if (p == wpath) return "@W@"
	if (index(p, wpath "/") != 1) return ""
	p = substr(p, length(wpath) + 1)
	q = p; gsub("/" d12, "/", q); gsub("\\.s" d12, ".s", q)
	return q ~ h8 || q ~ /staging\/(\.tmp-)?[0-9]+-/ ? "" : "@W@" p
}
# opened CALL RESULT: records the path of the descriptor an openat
# returned (a file O_TMPFILE made has none)
function opened(call, res, a, p, fd) {
	if (!match(res, / = [0-9]+$/)) return
	fd = substr(res, RSTART + 3); delete fdp[fd]
	if (index(call, "O_TMPFILE") || !match(call, /"[^"]*"/)) return
	p = substr(call, RSTART + 1, RLENGTH - 2)
	if (substr(p, 1, 1) != "/") {
		split(substr(call, index(call, "(") + 1), a, ", ")
		if (!(a[1] in fdp)) return
		p = fdp[a[1]] "/" p
	}
	fdp[fd] = p
}
/^[0-9]+ +(\+\+\+|---)/ { next }
/^[0-9]+ +openat\(/ { if (/ <unfinished \.\.\.>$/) pend[$1] = $0; else opened($0, $0) }
/^[0-9]+ +<\.\.\. openat resumed>/ { if ($1 in pend) opened(pend[$1], $0); delete pend[$1] }
# a call is counted once: by its line, or its "<unfinished ...>" line
/ = \?$|resumed>/ { next }
{
	s = $2; sub(/\(.*/, "", s)
	if (index(sampled, " " s " ")) n[s]++
	if (!index(every, " " s " ")) next
	n[s]++
	# the paths the call names, or its descriptors have, that are the
	# same in every run: -P counts the call once for each
	split("", seen)
	rest = $0
	while (match(rest, /"[^"]*"/)) {
		p = stable(substr(rest, RSTART + 1, RLENGTH - 2)); rest = substr(rest, RSTART + RLENGTH)
		if (p != "") seen[p] = 1
	}
	if (s in fdargs) {
		split(substr($0, index($0, "(") + 1), a, ", "); sub(/\).*/, "", a[1])
		for (j = 1; j <= length(fdargs[s]); j++) {
			i = substr(fdargs[s], j, 1)
			if ((a[i] in fdp) && (p = stable(fdp[a[i]])) != "") seen[p] = 1
		}
	}
	for (p in seen) np[s, p]++
}
END {
	for (s in n) if (index(every, " " s " ")) for (i = 1; i <= n[s]; i++) print "-e inject=" s ":signal=KILL:when=" i
	for (k in np) { split(k, a, SUBSEP); for (i = 1; i <= np[k]; i++) print "-P " a[2] " -e inject=" a[1] ":signal=KILL:when=" i }
	# max points among the sampled calls, split evenly among the names
	# called (in their order: the first ones take what max leaves over),
	# each name's evenly spaced over its calls: a call more or less of one
	# name (Go's runtime wakes its poller by a write) moves no other's
	ns = split(sampled, names, " "); nc = 0
	for (j = 1; j <= ns; j++) if (n[names[j]] > 0) called[++nc] = names[j]
	for (j = 1; j <= nc; j++) {
		c = n[called[j]]; k = int(max / nc) + (j <= max % nc); if (k > c) k = c
		for (i = 0; i < k; i++) print "-e inject=" called[j] ":signal=KILL:when=" int(i * c / k) + 1
	}
}
