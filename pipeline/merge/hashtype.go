package merge

import (
	"bytes"

	"github.com/infohash/infohash/formats/schema"
)

// unionHashType is the hash_type and info_hash_v2 of the union of two
// records of one hash, whichever record comes first:
//
//   - a record that is fetched, when the other is not, brings both: its
//     type is the one its metadata verified, the other's only a claim;
//   - otherwise a full v2 hash known to either makes the hash v2 (as
//     dedup reads an info_hash_v2), the smaller bytes when both know
//     differing ones; without one, v2 beats v1 (dedup's rule).
//
// An info_hash_v2 whose first 20 bytes are not the hash's is no v2 hash
// of it and is not kept. info_hash_v2_source comes with the v2 hash, from
// the record that gave it.
func unionHashType(a, b schema.State) (typ int8, v2 []byte, src string) {
	va, vb := ownV2(a), ownV2(b)
	fa, fb := a.MetadataStatus == schema.StatusFetched, b.MetadataStatus == schema.StatusFetched
	switch {
	case fa && !fb:
		return provenType(a.HashType, &a, va, &b, vb)
	case fb && !fa:
		return provenType(b.HashType, &b, vb, &a, va)
	}
	switch {
	case va == nil:
		v2, src = vb, b.InfoHashV2Source
	case vb == nil || bytes.Compare(va, vb) < 0:
		v2, src = va, a.InfoHashV2Source
	case bytes.Equal(va, vb):
		// One claim, two provenances: the greater, a known one (as
		// first_source at a tie), so the union is the same either way.
		v2, src = va, max(a.InfoHashV2Source, b.InfoHashV2Source)
	default:
		v2, src = vb, b.InfoHashV2Source
	}
	typ = max(a.HashType, b.HashType)
	if v2 != nil {
		typ = schema.HashV2
	} else {
		src = "" // no v2 hash (one not of this key is none)
	}
	return typ, v2, src
}

// provenType is the type, v2 hash and its source of a fetched record
// (type typ, record me, v2 hash mine) joined with another's claim (record
// them, v2 hash theirs): a v2 hash keeps its own full hash, or takes the
// other's; a v1 hash has none.
func provenType(typ int8, me *schema.State, mine []byte, them *schema.State, theirs []byte) (int8, []byte, string) {
	switch {
	case typ != schema.HashV2:
		return typ, nil, ""
	case mine == nil && theirs != nil:
		return typ, theirs, them.InfoHashV2Source
	case mine == nil:
		return typ, nil, ""
	}
	return typ, mine, me.InfoHashV2Source
}

// ownV2 is st's info_hash_v2 when it is a full v2 hash of st's info_hash,
// else nil.
func ownV2(st schema.State) []byte { return schema.FullV2(st.InfoHash, st.InfoHashV2) }

// adoptHashType sets st's hash_type and info_hash_v2 from the verified
// ok result r that fetched it: the metadata proves the type, where the
// state's was only what some input claimed (a hash_type 2 on a v1 hash
// made a good seeder's metadata a hash_mismatch). A v1 proof drops a v2
// hash, and a v2 proof's full hash replaces the state's: a full v2 hash
// from an imported list or magnet is a claim too, which fetch accepts
// metadata against only as far as the 20-byte hash bears it out
// (v2_claims_refuted). A v2 result without one (written before fetch
// recorded it) keeps the state's, a claim still. info_hash_v2_source says
// which: schema.V2SourceMetadata for a proven hash, the claim's own for a
// kept claim, null with no v2 hash.
func adoptHashType(st *schema.State, r *schema.Result) {
	switch {
	case r.HashType != schema.HashV2:
		st.HashType, st.InfoHashV2, st.InfoHashV2Source = schema.HashV1, nil, ""
	case len(r.InfoHashV2) == 32:
		st.HashType, st.InfoHashV2, st.InfoHashV2Source = schema.HashV2, r.InfoHashV2, schema.V2SourceMetadata
	default:
		st.HashType = schema.HashV2
		if st.InfoHashV2 = ownV2(*st); st.InfoHashV2 == nil {
			st.InfoHashV2Source = ""
		}
	}
}
