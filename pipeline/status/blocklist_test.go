package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestBlocklistUnreadable: a blocklist status cannot read is reported,
// not fatal to the report. It used to make status fail before it wrote a
// thing (exit 1, no gauges: monitoring went blind while plan-retries
// refused to plan). Now the report has every count but the retry waves
// (which leave the blocklist's hashes out: nil, null in JSON), the error
// naming DIR/blocklist:LINE in BlocklistError, and the gauges
// blocklist_unreadable 1 and all others but the waves. A blocklist of
// magnet URIs is read, its hashes left out of the waves.
func TestBlocklistUnreadable(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	hashes := []schema.Hash{{0, 1}, {0, 2}, {0, 3}}
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var rows []schema.State
	for _, h := range hashes {
		rows = append(rows, schema.State{InfoHash: h, HashType: 1, MetadataStatus: schema.StatusNew, Tier: schema.TierHot,
			NextRetry: now.Add(-time.Hour).UnixMilli()})
	}
	fi, err := dataset.WriteStagedAs(tx, dataset.TableState, "00", dataset.NewName(".parquet"), rows)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{fi})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	path := filepath.Join(d.Dir, schedule.BlocklistName)
	magnet := "magnet:?xt=urn:btih:" + schema.Hex(hashes[0]) + "&dn=blocked\n"

	for _, tt := range []struct {
		name, list string
		verify     bool
		wantErr    string // BlocklistError; "" for none
		overdue    int64
		blocked    int64  // Blocklisted (known hashes listed), when readable
		line       string // the end of the text's blocklisted line; "" for none
	}{
		{name: "none", overdue: 3},
		{name: "magnet", list: "# takedown\n" + magnet, overdue: 2, blocked: 1,
			line: " 1 of the known hashes (" + path + " lists 1): never planned nor exported, nor in the retry waves\n"},
		{name: "one known of two", list: magnet + strings.Repeat("ab", 20) + "\n", overdue: 2, blocked: 1, line: " 1 of the known hashes (" + path + " lists 2)"},
		{name: "bad line", list: magnet + "not a hash\n", wantErr: "blocklist: " + path + `:2: infohash "not a hash": want 40 or 64 hex characters`},
		{name: "bad line, verified", list: "magnet:?dn=x\n", verify: true, wantErr: "blocklist: " + path + ":1: magnet URI without"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(path)
			if tt.list != "" {
				if err := os.WriteFile(path, []byte(tt.list), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Run(context.Background(), d.Dir, now, Options{Verify: tt.verify})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.Hashes != 3 || r.ByStatus[schema.StatusNew] != 3 || r.TableRows["state"] != 3 {
				t.Errorf("hashes %d, by status %v, table rows %v: want the 3 counted", r.Hashes, r.ByStatus, r.TableRows)
			}
			var text, js bytes.Buffer
			r.Print(&text)
			if err := json.NewEncoder(&js).Encode(r); err != nil {
				t.Fatal(err)
			}
			prom := string(r.Metrics(time.Second, now, 12345))
			checkExposition(t, prom)
			if tt.wantErr == "" {
				if r.BlocklistError != nil {
					t.Fatalf("BlocklistError = %q, want none", *r.BlocklistError)
				}
				if got := r.WavesBy["hot"]["new"]["overdue"]; got != tt.overdue {
					t.Errorf("hot new overdue = %d, want %d", got, tt.overdue)
				}
				for _, want := range []string{"infohash_status_blocklist_unreadable 0\n", "infohash_status_overdue{"} {
					if !strings.Contains(prom, want) {
						t.Errorf("metrics lack %q:\n%s", want, prom)
					}
				}
				if !strings.Contains(js.String(), `"blocklist_error":null`) || strings.Contains(text.String(), "unreadable") {
					t.Errorf("a readable blocklist reported unreadable:\n%s\n%s", text.String(), js.String())
				}
				// The hashes the waves leave out are counted, so that
				// by status and the waves add up.
				if want := fmt.Sprintf(`"blocklisted":%d`, tt.blocked); !strings.Contains(js.String(), want) {
					t.Errorf("JSON lacks %s:\n%s", want, js.String())
				}
				if want := fmt.Sprintf("\ninfohash_status_blocklisted %d\n", tt.blocked); !strings.Contains(prom, want) {
					t.Errorf("metrics lack %q:\n%s", want[1:], prom)
				}
				if got := strings.Contains(text.String(), "\nblocklisted "); got != (tt.line != "") || !strings.Contains(text.String(), tt.line) {
					t.Errorf("text report, want a line %q:\n%s", tt.line, text.String())
				}
				return
			}
			if r.BlocklistError == nil || !strings.HasPrefix(*r.BlocklistError, tt.wantErr) || strings.Contains(*r.BlocklistError, "\n") {
				t.Fatalf("BlocklistError = %v, want one line starting %q", r.BlocklistError, tt.wantErr)
			}
			if r.RetryWaves != nil || r.WavesBy != nil || r.Blocklisted != nil || !strings.Contains(js.String(), `"blocklisted":null`) {
				t.Errorf("waves or blocklisted hashes counted without the blocklist: %v %v %v", r.RetryWaves, r.WavesBy, r.Blocklisted)
			}
			for _, want := range []string{"infohash_status_blocklist_unreadable 1\n", `infohash_status_hashes{metadata_status="new",tier="hot"} 3` + "\n",
				`infohash_status_table_rows{table="state"} 3` + "\n", "infohash_status_leases_live 0\n",
				"infohash_status_last_success_timestamp_seconds 12345\n"} {
				if !strings.Contains(prom, want) {
					t.Errorf("metrics lack %q:\n%s", want, prom)
				}
			}
			for _, bad := range []string{"infohash_status_overdue", "infohash_status_retry_wave", "infohash_status_run_duration_seconds", "infohash_status_blocklisted"} {
				if strings.Contains(prom, bad) {
					t.Errorf("metrics have %s:\n%s", bad, prom)
				}
			}
			if !strings.Contains(text.String(), "unreadable, retry waves not counted: "+tt.wantErr) || strings.Contains(text.String(), "retry waves (from") {
				t.Errorf("text report:\n%s", text.String())
			}
			var back struct {
				BlocklistError *string `json:"blocklist_error"`
				Hashes         int64   `json:"hashes"`
			}
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.BlocklistError == nil || *back.BlocklistError != *r.BlocklistError || back.Hashes != 3 {
				t.Errorf("JSON blocklist_error %v, hashes %d, %v: want the error and 3:\n%s", back.BlocklistError, back.Hashes, err, js.String())
			}
			for _, want := range []string{`"retry_waves":null`, `"retry_waves_by_tier_and_kind":null`} {
				if !strings.Contains(js.String(), want) {
					t.Errorf("JSON lacks %s:\n%s", want, js.String())
				}
			}
		})
	}
}
