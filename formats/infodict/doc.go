// Package infodict decodes BitTorrent info dictionaries (and the bencode
// of BEP 9/10 messages) received from untrusted peers: a bounded scan with
// the walker of package formats/bencode checks the shape before the
// reflective anacrolix decoder sees it, and
// Parse turns a verified info dictionary into the metadata columns
// (schema.Meta). fetch decodes what a peer served with it, and merge
// derives a result's metadata columns from its verified info_bytes with
// it, so that both store the same columns for the same bytes.
package infodict
