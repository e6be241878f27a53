package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/plan"
)

// TestReadPlannedV2: the jobs plan-retries writes, to a Parquet file or
// as an Arrow stream, read back here with a v2 hash's full 32 bytes when
// the state knows them (fetch then verifies against them), and with none
// for a v1 hash.
func TestReadPlannedV2(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	v1 := schema.State{InfoHash: schema.Hash{0x01, 1}, HashType: schema.HashV1, FirstSeen: now.UnixMilli(),
		LastSeen: now.UnixMilli(), SeenCount: 1, LastSource: schema.SourceGetPeers, Activity: 1,
		MetadataStatus: schema.StatusNew, Tier: schema.TierHot}
	v2 := v1
	v2.InfoHash[1], v2.HashType = 2, schema.HashV2
	v2.InfoHashV2 = append(v2.InfoHash[:], bytes.Repeat([]byte{0xee}, 12)...)
	dir := t.TempDir()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := dataset.WriteStaged(tx, dataset.TableState, "01", []schema.State{v1, v2})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, "01", []dataset.FileInfo{fi})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}

	for _, output := range []string{"file", "stream"} {
		t.Run(output, func(t *testing.T) {
			var stdout bytes.Buffer
			o := plan.DefaultOptions()
			o.Data, o.Now, o.Stdout, o.Output = dir, now.Add(time.Hour), &stdout, "-"
			o.Lease = time.Minute // each subtest plans again once the other's lease ends
			if output == "file" {
				o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
			} else {
				o.Now = o.Now.Add(time.Hour)
			}
			if _, err := plan.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			r, err := openJobs(o.Output, &stdout, "")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := map[schema.Hash]schema.Job{}
			buf := make([]jobRow, 4)
			for {
				n, err := r.Read(buf)
				for _, row := range buf[:n] {
					got[row.InfoHash] = row.job()
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, st := range []schema.State{v1, v2} {
				j, ok := got[st.InfoHash]
				if !ok {
					t.Fatalf("%x not planned: %v", st.InfoHash, got)
				}
				if !bytes.Equal(j.InfoHashV2, st.InfoHashV2) || (j.InfoHashV2 == nil) != (st.InfoHashV2 == nil) ||
					j.HashType != st.HashType {
					t.Errorf("%x: job hash_type %d info_hash_v2 %x, want %d %x", st.InfoHash, j.HashType, j.InfoHashV2,
						st.HashType, st.InfoHashV2)
				}
				if v2 := fullV2(j); !bytes.Equal(v2, st.InfoHashV2) {
					t.Errorf("%x: fetch verifies against %x, want %x", st.InfoHash, v2, st.InfoHashV2)
				}
			}
		})
	}
}
