package export

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// tableDoc documents an exported table: what a row is, the row type
// export writes (its Parquet schema gives the columns, their order, types
// and nullability), and what each column means. describe_test holds
// every table's meanings to its schema: a column without one fails it.
type tableDoc struct {
	about    string
	row      any
	meanings map[string]string
}

// Meanings shared by the tables that have the column.
var (
	stateMeanings = map[string]string{
		"info_hash":    "the DHT key, 20 bytes (a v2 hash truncated to 20 bytes, as the DHT does)",
		"info_hash_v2": "the full 32-byte v2 (BEP 52) hash when known",
		"hash_type": "1 = v1, 2 = v2: as the inputs claim (v2 if any does) until a fetch proves it from the " +
			"metadata",
		"first_seen": "the first observation's time",
		"last_seen":  "the latest observation's time",
		"seen_count": "observations folded in (0: a fetch result added the hash before any sighting)",
		"last_source": "source of the latest observation: dht_get_peers, dht_announce_peer, " +
			"dht_sample_infohashes, import (an input's own UTF-8 value, at most 256 bytes, is kept; empty is import)",
		"activity": "observations decayed by the policy's half-life, as of last_seen (never the wall clock)",
		"metadata_status": "new (no attempt counted yet), fetched (its metadata is in torrents) or failed " +
			"(attempted, not fetched: retried as the policy says)",
		"attempts":     "fetch attempts counted (local_error and peers_penalised count none)",
		"backoff_step": "position in the failure class's backoff schedule",
		"bad_metadata": "distinct peers that served bad metadata or claimed too_large since the last success",
		"last_attempt": "time of the last counted attempt; null: never tried",
		"last_failure": "class of the last counted failure; null: none since the last success (a never-tried " +
			"hash's says local_error after one)",
		"next_retry": "when the hash is due for a fetch (a new hash: the clock of the dedup run that found it); " +
			"null: fetched",
		"lease_id": "the hash's lease in the leases table (the plan-retries run that planned it), live or " +
			"ended; null: none. The state's files keep it null: export fills it",
		"lease_until": "that lease's end: live while in the future; null: no lease",
		"tier":        "hot, or cold (archived: still here, planned rarely)",
		"reactivated_at": "when a fresh sighting last pulled a dormant hash's next_retry forward; " +
			"null: never",
		"avoid_peers": "ip:port, most recent last (at most 16): while bad_metadata is 0, the endpoints that " +
			"failed the hash with a penalising class, until their penalty ends; from then to the next " +
			"success, the peers that served bad metadata or claimed too_large",
		"peers": "ip:port of peers that announced the hash (announce_peer), newest first, each once, at " +
			"most 8",
		"first_source": "source of the sighting at first_seen (at a tie, the greatest; import: a fetch " +
			"result added the row, sighted no earlier), as last_source names it; null: unknown (made before " +
			"format 10, sighted no earlier since)",
		"last_failure_at": "when last_failure was set (that attempt's time); null: no failure since the last " +
			"success, or unknown (before format 10)",
		"info_hash_v2_source": "where info_hash_v2 came from: the source (as last_source names it) of the " +
			"observation dedup took the claim from (import: a 64-hex line or a magnet's btmh), or metadata once a " +
			"fetch proved it; null: no info_hash_v2, or unknown (before format 12)",
		"peers_at": "when the newest announcement (dht_announce_peer, peers' only source) that put or kept an " +
			"endpoint in peers was observed; null: no peers, or unknown (before format 12)",
	}
	torrentMeanings = map[string]string{
		"info_hash": "the DHT key, 20 bytes (a v2 hash truncated to 20 bytes)",
		"hash_type": "1 = v1 (the info dictionary's SHA-1 is info_hash), 2 = v2 (the first 20 bytes of " +
			"its SHA-256 are), as the metadata proved",
		"fetched_at": "when the metadata was fetched: the attempt's start plus its duration (fetch's clock)",
		"served_by":  "the peer (ip:port) that served the verified metadata",
		"metadata_size": "the info dictionary's size in bytes (BEP 9 metadata_size, verified: " +
			"info_bytes' length)",
		"name": "the torrent's name as UTF-8 (invalid bytes as U+FFFD, or name.utf-8 when that is " +
			"valid); an empty name is a value",
		"name_raw":        "the name's bytes as the peer sent them",
		"name_utf8_valid": "whether name_raw is valid UTF-8",
		"total_size":      "the files' lengths added up, in bytes",
		"piece_length":    "the piece length in bytes; null when the info dictionary has none",
		"file_count":      "the number of files",
		"files": "each file: path (its path elements as UTF-8 joined by /), path_raw (their bytes as " +
			"sent, joined by /), length in bytes",
		"private":    "the info dictionary's private flag (BEP 27) is 1",
		"info_bytes": "the verified bencoded info dictionary, as the peer sent it",
	}
)

// tableDocs documents each of Tables.
var tableDocs = map[string]tableDoc{
	"state": {"one row per known hash: sightings, metadata status and retry state " +
		"(DIR/state/current/prefix=XX/*.parquet, where lease_id and lease_until are null), sorted by info_hash",
		schema.State{}, stateMeanings},
	"torrents": {"one row per fetched hash: its verified metadata " +
		"(DIR/torrents/current/prefix=XX/*.parquet), sorted by info_hash",
		schema.Torrent{}, torrentMeanings},
	"catalog": {"one row per known hash: the state's columns but lease_id, lease_until, backoff_step, " +
		"bad_metadata, reactivated_at, avoid_peers, peers and peers_at, then the torrent's but info_bytes (null until " +
		"fetched: fetched_at to private), sorted by info_hash",
		schema.Catalog{}, catalogMeanings()},
	"leases": {"one row per planned job whose result merge has not applied (DIR/leases/current/*.parquet), " +
		"sorted by info_hash; exported whole",
		schema.Lease{}, map[string]string{
			"info_hash": "the leased hash",
			"lease_id": "the jobs file's lease (one per plan-retries run): a result counts only under " +
				"the hash's current lease",
			"lease_until": "the lease's end: live while in the future, then the hash is planned again (the " +
				"row stays until then, a late result ends it, or 7 days on)",
			"attempt":    "the attempt the job is: the hash's attempts + 1",
			"reason":     "why it was planned: new, retry, reactivated or cold",
			"planned_at": "when plan-retries planned it (its clock)",
		}},
	"peers": {"one row per penalised peer endpoint (DIR/peers/current/*.parquet), sorted by addr; a penalty " +
		"that ended stays until merge forgets it (the policy's peer_penalty.forget after until), so that " +
		"the next failure grows it; exported whole",
		schema.PeerPenalty{}, map[string]string{
			"addr":     "the endpoint, ip:port",
			"class":    "the failure class that set until",
			"until":    "the penalty's end: plan-retries and fetch avoid the endpoint until then",
			"failures": "failures in a row the penalty grew from (each multiplies it, up to the policy's max)",
			"last_at":  "the endpoint's latest penalised failure",
		}},
	"ledger": {"one row per input applied (DIR/ledger/current/*.parquet), in the order applied; " +
		"exported whole",
		LedgerEntry{}, map[string]string{
			"id": "the input's content checksum (dedup's xxh3-128, merge's SHA-256): the same bytes " +
				"again are a no-op",
			"name": `the input's name, a path in it absolute (older entries: as given on the command ` +
				`line); bytes that are not UTF-8 as \xHH`,
			"rows":       "the rows (observations, results or list lines) the input held",
			"applied_at": "the applying run's clock (--now, else the wall clock): not always the order applied",
		}},
}

// catalogMeanings are the state's meanings for the catalog's state
// columns, the torrent's, null until fetched, for the others.
func catalogMeanings() map[string]string {
	out := map[string]string{}
	for _, f := range parquet.SchemaOf(schema.Catalog{}).Fields() {
		n := f.Name()
		if m, ok := stateMeanings[n]; ok {
			out[n] = m
		} else if m, ok := torrentMeanings[n]; ok {
			out[n] = m + "; null until fetched"
		}
	}
	return out
}

// Describe writes what export writes of table: a line saying what a row
// is, then each column, in the order written, with its type and
// nullability as the schema gives them and what it means, then the
// columns each format leaves out and how the text formats render values.
// table "all" describes every table.
func Describe(w io.Writer, table string) error {
	if table == "all" {
		for i, t := range Tables {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := Describe(w, t); err != nil {
				return err
			}
		}
		return nil
	}
	doc, ok := tableDocs[table]
	if !ok {
		return exitcode.BadInput(fmt.Errorf("export: --describe %q: want one of %s, or all", table, strings.Join(Tables, ", ")))
	}
	for _, line := range wrap(table+": "+doc.about+".", 100) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	var names []string
	for _, f := range parquet.SchemaOf(doc.row).Fields() {
		names = append(names, f.Name())
		typ := schema.TypeName(f)
		if f.Optional() {
			typ += ", null"
		}
		fmt.Fprintf(w, "%s  %s\n", f.Name(), typ)
		for _, line := range wrap(doc.meanings[f.Name()], 96) {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	fmt.Fprintln(w)
	fs := []string{"parquet", "arrow", "csv", "jsonl", "es-bulk"}
	if slices.Contains(wholeTables, table) {
		fs = fs[:4] // nor magnet: no hash to link
	}
	// Formats that leave out the same columns go together.
	var groups, lefts []string
	for _, f := range fs {
		var left []string
		for _, c := range omitted[f] {
			if slices.Contains(names, c) {
				left = append(left, c)
			}
		}
		l := "every column"
		if len(left) > 0 {
			l = "all but " + strings.Join(left, ", ")
		}
		if i := slices.Index(lefts, l); i >= 0 {
			groups[i] += ", " + f
			continue
		}
		groups, lefts = append(groups, f), append(lefts, l)
	}
	formats := "Formats:"
	for i := range groups {
		formats += " " + groups[i] + ": " + lefts[i] + ";"
	}
	if slices.Contains(wholeTables, table) {
		formats = strings.TrimSuffix(formats, ";") + "."
	} else {
		formats += " magnet: a link per hash."
	}
	for _, line := range wrap(formats+" "+textNote, 100) {
		fmt.Fprintln(w, line)
	}
	readers, err := duckdbReaders(doc.row)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, line := range readers { // unwrapped: each is SQL to copy whole
		fmt.Fprintln(w, line)
	}
	return nil
}

// textNote says how the text formats render the types above, and how
// DuckDB reads them back.
const textNote = "In the text formats: byte arrays are lowercase hex; times RFC 3339 UTC with " +
	"milliseconds (2026-03-01T12:00:00.000Z; outside the years 0000-9999, which RFC 3339 lacks, with more " +
	"year digits or a minus sign, as DuckDB reads them: 10000-01-01T00:00:00.000Z; past DuckDB's range, infinity " +
	"or -infinity); a DOUBLE always with a fraction or an exponent (1.0, not 1); " +
	"lists and structs JSON (JSON text in a csv cell, but for a list of strings: [\"a\",\"b\"], only \" and \\ " +
	"escaped, by \\, as DuckDB's VARCHAR[] reads it); null an " +
	"empty csv cell or JSON null, where an empty string is \"\". DuckDB's sniffer reads those times from " +
	"csv as TIMESTAMP WITH TIME ZONE, as from parquet, but from jsonl as TIMESTAMP (the UTC time without " +
	"its zone: timezone('UTC', col) is the instant, whatever the session's TimeZone), a column null " +
	"in every row it samples as VARCHAR (csv) or JSON (jsonl), and a hex column of digits alone in " +
	"every row it samples (name_raw 3230323420 for \"2024 \") as a number (csv). These calls (F: the file, or " +
	"'/dev/stdin') type every column, times as instants, with no sniffing:"

// wrap splits s into lines of at most width bytes at spaces (a longer
// word stays whole on its line).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
