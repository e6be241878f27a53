package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// tsvHeader names the per-pass columns.
const tsvHeader = "hour\tdue\tdue_new\tdue_retry\tdue_cold\tdue_unplanned\tplanned\tplanned_new\tplanned_retry\t" +
	"planned_reactivated\tplanned_cold\trelet\tapplied\tlate_ignored\tarchived\n"

// run drives the passes.
func (s *sim) run() error {
	if s.c.tsv != "" {
		f, err := os.Create(s.c.tsv)
		if err != nil {
			return err
		}
		defer f.Close()
		s.tsv = f
		fmt.Fprint(f, tsvHeader)
	}
	// A fifth of the hashes were last seen 85 days before the start: once
	// tried enough they go cold (archive.unseen 90d, min_attempts 6).
	old := s.fresh(s.c.n / 5)
	if err := s.sightList(old, s.c.t0-85*day); err != nil {
		return err
	}
	if err := s.sightList(s.fresh(s.c.n-len(old)), s.c.t0); err != nil {
		return err
	}
	if s.c.policy != "" {
		if err := s.ih(append([]string{"policy", "set", "--data", s.dir}, strings.Fields(s.c.policy)...)...); err != nil {
			return err
		}
	}
	if err := s.readState(s.c.t0); err != nil {
		return err
	}
	end := s.c.t0 + int64(s.c.days)*day
	flooded := false
	for now := s.c.t0; now < end; now += s.c.every.Milliseconds() {
		if s.down(now) {
			continue
		}
		if !flooded && now >= s.c.t0+s.c.downTo.Milliseconds() && s.c.flood > 0 {
			flooded = true
			if err := s.sightList(s.fresh(s.c.flood), now); err != nil {
				return err
			}
		}
		if s.sighted == nil && now >= s.c.t0+s.c.sightAt.Milliseconds() && s.c.sight > 0 {
			if err := s.sightCold(now); err != nil {
				return err
			}
		}
		if err := s.pass(now); err != nil {
			return err
		}
	}
	return nil
}

// sightCold sights some cold hashes at now.
func (s *sim) sightCold(now int64) error {
	hs := s.coldHashes(s.c.sight)
	s.sighted, s.sightT = map[schema.Hash]int64{}, now
	before := map[schema.Hash]int64{}
	for _, h := range hs {
		s.sighted[h] = 0
		before[h] = s.hashes[h].dueAt
	}
	if err := s.sightList(hs, now); err != nil {
		return err
	}
	if err := s.readState(now); err != nil {
		return err
	}
	for _, h := range hs {
		if s.hashes[h].cold {
			s.failf("%s: cold hash %s sighted, still cold", rfc(now), schema.Hex(h))
		}
		if s.hashes[h].dueAt < before[h] {
			s.sightOK++
		}
	}
	return nil
}

// pass runs one plan-retries → fetch → merge pass at now.
func (s *sim) pass(now int64) error {
	s.passes++
	jobsPath := filepath.Join(s.c.work, fmt.Sprintf("jobs-%d.parquet", s.passes))
	planJSON := filepath.Join(s.c.work, "plan.json")
	if err := s.ih("plan-retries", "--data", s.dir, "--now", rfc(now), "--limit", fmt.Sprint(s.c.limit),
		"-o", jobsPath, "--stats-json", planJSON); err != nil {
		return err
	}
	ps, err := readJSON(planJSON)
	if err != nil {
		return err
	}
	if q := newQuota(s.c.limit, ps["due_new"], ps["due_retry"]+ps["due_cold"] > 0); int(ps["planned_new"]) < q {
		s.failf("%s: %v new jobs of %v due, want at least %d", rfc(now), ps["planned_new"], ps["due_new"], q)
	}
	r, err := rowio.Open[schema.Job](jobsPath, nil)
	if err != nil {
		return err
	}
	jobs, err := r.ReadAll()
	r.Close()
	os.Remove(jobsPath)
	if err != nil {
		return err
	}
	rs := make([]schema.Result, len(jobs))
	for i, j := range jobs {
		hi := s.hashes[j.InfoHash]
		if hi.dueAt > now {
			s.failf("%s: %s planned before its next_retry %s", rfc(now), schema.Hex(j.InfoHash), rfc(hi.dueAt))
		}
		if hi.counted > 0 {
			s.lags = append(s.lags, lag{class: classOf(j.InfoHash), cold: j.Reason == schema.ReasonCold, due: hi.dueAt, ms: now - hi.dueAt})
		}
		if at, ok := s.sighted[j.InfoHash]; ok && at == 0 {
			s.sighted[j.InfoHash] = now
		}
		rs[i] = s.answer(j, now+minute)
	}
	ms := map[string]float64{}
	switch {
	case s.crash.at == 0 && s.c.crashAt > 0 && now >= s.c.t0+s.c.crashAt.Milliseconds() && len(jobs) > 0:
		// fetch crashed: nothing merged; its leases run out
		s.crash.at, s.crash.leaseUntil, s.late = now, jobs[0].LeaseUntil, rs
		s.crashCounted = map[schema.Hash]int{}
		for _, j := range jobs {
			s.crashCounted[j.InfoHash] = s.hashes[j.InfoHash].counted
		}
	case len(jobs) > 0:
		for _, j := range jobs {
			s.hashes[j.InfoHash].counted++
		}
		if ms, err = s.merge(now+2*minute, rs); err != nil {
			return err
		}
		if err := s.afterMerge(now, jobs); err != nil {
			return err
		}
	}
	if err := s.mergeLate(now); err != nil {
		return err
	}
	if s.tsv != nil {
		fmt.Fprintf(s.tsv, "%d\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\n", (now-s.c.t0)/hour,
			ps["due"], ps["due_new"], ps["due_retry"], ps["due_cold"], ps["due_unplanned"], ps["planned"],
			ps["planned_new"], ps["planned_retry"], ps["planned_reactivated"], ps["planned_cold"],
			ps["expired_leases_replanned"], ms["failures_applied"], ms["late_failures_ignored"], ms["archived_to_cold"])
	}
	return nil
}

// merge folds rs in at now.
func (s *sim) merge(now int64, rs []schema.Result) (map[string]float64, error) {
	path := filepath.Join(s.c.work, "results.parquet")
	mergeJSON := filepath.Join(s.c.work, "merge.json")
	if err := writeResults(path, rs); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	if err := s.ih("merge", "--data", s.dir, "--now", rfc(now), path, "--stats-json", mergeJSON); err != nil {
		return nil, err
	}
	return readJSON(mergeJSON)
}

// afterMerge reads the state and notes when each attempted hash wakes.
func (s *sim) afterMerge(now int64, jobs []schema.Job) error {
	if err := s.readState(now); err != nil {
		return err
	}
	for _, j := range jobs {
		s.noteWake(now+minute, s.hashes[j.InfoHash].dueAt)
	}
	for _, j := range jobs {
		if n, ok := s.crashCounted[j.InfoHash]; ok && s.hashes[j.InfoHash].counted == n+1 {
			s.crash.replannedBy = max(s.crash.replannedBy, now)
		}
	}
	return nil
}

// mergeLate merges the crashed fetch's results once every crashed hash
// was planned again and its new attempt merged: they must be ignored.
func (s *sim) mergeLate(now int64) error {
	if s.late == nil {
		return nil
	}
	for _, r := range s.late {
		if s.hashes[r.InfoHash].counted <= s.crashCounted[r.InfoHash] {
			return nil // not yet attempted again and merged
		}
	}
	ms, err := s.merge(now+3*minute, s.late)
	if err != nil {
		return err
	}
	if int(ms["late_failures_ignored"]) != len(s.late) || ms["failures_applied"] != 0 {
		s.failf("%s: late results: %v ignored, %v applied; want all %d ignored", rfc(now),
			ms["late_failures_ignored"], ms["failures_applied"], len(s.late))
	}
	s.late = nil
	return s.readState(now)
}

// errorsText is the failed properties, one a line.
func (s *sim) errorsText() string { return strings.Join(s.errs, "\n") }
