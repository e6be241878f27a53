package export

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// catalogProvenance names, for every column of the catalog, the columns
// that say where or when its value came from: a sighting's source and
// time, a failure's time, the fetch that proved the metadata. Columns the
// network did not give (the key, the schedule, the tier) and times
// themselves need none. A new catalog column must be added here.
var catalogProvenance = map[string][]string{
	"info_hash":           nil,
	"info_hash_v2":        {"info_hash_v2_source"}, // an input's claim, or metadata a fetch proved
	"info_hash_v2_source": {"info_hash_v2"},
	"hash_type":           {"fetched_at"},
	"first_seen":          {"first_source"},
	"first_source":        {"first_seen"},
	"last_seen":           {"last_source"},
	"last_source":         {"last_seen"},
	"seen_count":          {"first_seen", "last_seen"},
	"activity":            {"last_seen"},
	"metadata_status":     {"last_attempt"},
	"attempts":            {"last_attempt"},
	"last_attempt":        nil,
	"last_failure":        {"last_failure_at"},
	"last_failure_at":     {"last_failure"},
	"next_retry":          nil,
	"tier":                nil,
	"fetched_at":          {"served_by"},
	"served_by":           {"fetched_at"},
	"metadata_size":       {"fetched_at", "served_by"},
	"name":                {"fetched_at", "served_by"},
	"name_raw":            {"fetched_at", "served_by"},
	"name_utf8_valid":     {"fetched_at", "served_by"},
	"total_size":          {"fetched_at", "served_by"},
	"piece_length":        {"fetched_at", "served_by"},
	"file_count":          {"fetched_at", "served_by"},
	"files":               {"fetched_at", "served_by"},
	"private":             {"fetched_at", "served_by"},
}

// TestCatalogKeepsProvenance: the catalog (and so the es-bulk search
// documents made of it) ships no network-derived column without the
// columns that give its source and time (first_seen and last_failure
// went without first_source and last_failure_at), and each of those is
// the state's value for the hash.
func TestCatalogKeepsProvenance(t *testing.T) {
	var cols []string
	for _, f := range parquet.SchemaOf(schema.Catalog{}).Fields() {
		cols = append(cols, f.Name())
	}
	for _, c := range cols {
		prov, ok := catalogProvenance[c]
		if !ok {
			t.Errorf("catalog column %s: say in catalogProvenance which columns give its source and time", c)
		}
		for _, p := range prov {
			if !slices.Contains(cols, p) {
				t.Errorf("the catalog ships %s without %s, which says where or when it came from", c, p)
			}
		}
	}

	data := goldenDataset(t)
	state := map[string]map[string]any{}
	for line := range bytes.Lines(export(t, data, "state", "jsonl", nil)) {
		var doc map[string]any
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatal(err)
		}
		state[doc["info_hash"].(string)] = doc
	}
	docs := 0
	for line := range bytes.Lines(export(t, data, "catalog", "es-bulk", nil)) {
		var doc map[string]any
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatal(err)
		}
		if _, action := doc["index"]; action {
			continue
		}
		docs++
		h, _ := doc["info_hash"].(string)
		st, ok := state[h]
		if !ok {
			t.Fatalf("search document of %q: no such hash in the state", h)
		}
		for _, c := range []string{"first_seen", "first_source", "last_failure", "last_failure_at"} {
			if got, want := doc[c], st[c]; got != want {
				t.Errorf("search document of %s: %s is %v, the state's %v", h, c, got, want)
			}
		}
	}
	if docs != len(state) || docs == 0 {
		t.Fatalf("%d search documents of %d hashes", docs, len(state))
	}
}
