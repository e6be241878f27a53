#!/bin/sh
# Regenerates the Parquet files DuckDB writes that dedup's tests read
# (duckdb_test.go). Run from the repository root after building bin/duckq
# (scripts/lib.sh builds it from tools/duckcheck):
#
#	sh pipeline/dedup/testdata/duckdb/gen.sh
#
# Each file holds 50 rows: one page per column, which DuckDB ends with a
# bit-packed run of definition levels padded to 256.
set -eu
out=pipeline/dedup/testdata/duckdb
hash="unhex(md5(i::varchar) || '01234567')"
at="TIMESTAMP '2024-05-01 12:00:00' + to_seconds(i)"
q() { bin/duckq --threads 1 "$1" >/dev/null; }
rows() { echo "FROM (SELECT range AS i FROM range(50))"; }

# Nulls in the optional columns: a null source is an import, a null
# hash_type a v1 hash.
q "COPY (SELECT $hash AS info_hash, $at AS observed_at,
	CASE WHEN i % 3 = 0 THEN NULL ELSE 'dht_get_peers' END AS source,
	CASE WHEN i % 4 = 0 THEN NULL ELSE 1 END::TINYINT AS hash_type $(rows)) TO '$out/nulls.parquet'"
# A null in a required column, read by the fast path ...
q "COPY (SELECT CASE WHEN i = 7 THEN NULL ELSE $hash END AS info_hash, $at AS observed_at $(rows)) TO '$out/null_info_hash.parquet'"
q "COPY (SELECT $hash AS info_hash, CASE WHEN i = 9 THEN NULL ELSE $at END AS observed_at $(rows)) TO '$out/null_observed_at.parquet'"
# ... and by the row reader (hash_type BIGINT is not the fast path's).
q "COPY (SELECT CASE WHEN i = 7 THEN NULL ELSE $hash END AS info_hash, $at AS observed_at, 1::BIGINT AS hash_type $(rows)) TO '$out/null_info_hash_bigint.parquet'"
q "COPY (SELECT $hash AS info_hash, CASE WHEN i = 9 THEN NULL ELSE $at END AS observed_at, 1::BIGINT AS hash_type $(rows)) TO '$out/null_observed_at_bigint.parquet'"

# Hashes as hex text (VARCHAR): 40 digits for v1, 64 for v2, either case;
# hex_blob.parquet holds the same rows as BLOBs. hex_bad.parquet has 32
# digits in row 3 (not a hash, though 32 bytes would pass as a v2 one).
hexrows="FROM (SELECT i, md5((i % 10)::varchar) || '01234567' AS h1,
	md5((i % 10)::varchar) || md5('v2' || (i % 10)) AS h2 FROM (SELECT range AS i FROM range(50)))"
hexsel="CASE WHEN i % 10 = 3 THEN h2 WHEN i % 7 = 0 THEN upper(h1) ELSE h1 END"
q "COPY (SELECT $hexsel AS info_hash, CASE WHEN i % 10 = 3 THEN upper(h2) END AS info_hash_v2,
	$at AS observed_at $hexrows) TO '$out/hex.parquet'"
q "COPY (SELECT unhex($hexsel) AS info_hash, unhex(CASE WHEN i % 10 = 3 THEN h2 END) AS info_hash_v2,
	$at AS observed_at $hexrows) TO '$out/hex_blob.parquet'"
q "COPY (SELECT CASE WHEN i = 3 THEN md5('x') ELSE h1 END AS info_hash, $at AS observed_at $hexrows) TO '$out/hex_bad.parquet'"

# An announced peer_port of each integer type DuckDB writes as INT32, and
# of BIGINT and UBIGINT (INT64) (badports_test.go): eight rows,
# dht_announce_peer but row 7 (dht_get_peers, port 0: not counted); ports
# 200, 0 (bad), the type's own (INTEGER's -1, UINTEGER's 70000, BIGINT's
# 2^32+6881 and UBIGINT's 2^64-1 bad, USMALLINT's 65535 and UTINYINT's 255
# ports), null, then 4, 5, 6. A DOUBLE and a VARCHAR one (portschema_test.go)
# are no integer: the wrong schema.
for t in INTEGER:-1 UINTEGER:70000 USMALLINT:65535 UTINYINT:255 BIGINT:4294973177 \
	UBIGINT:18446744073709551615 DOUBLE:6881 VARCHAR:6881; do
	q "COPY (SELECT $hash AS info_hash, $at AS observed_at,
	CASE WHEN i = 7 THEN 'dht_get_peers' ELSE 'dht_announce_peer' END AS source, '10.0.0.' || i || ':1' AS node_addr,
	CASE i WHEN 0 THEN 200 WHEN 1 THEN 0 WHEN 2 THEN ${t#*:} WHEN 3 THEN NULL WHEN 7 THEN 0 ELSE i END::${t%%:*} AS peer_port
	FROM (SELECT range AS i FROM range(8))) TO '$out/peer_port_$(echo "${t%%:*}" | tr 'A-Z' 'a-z').parquet'"
done
