// Package krpc decodes and encodes the DHT's KRPC messages (BEP 5, BEP 51)
// for capture's hot path: a bounded, allocation-free bencode walk that
// picks out the fields capture uses and skips the rest, and append-style
// encoders for the replies and queries capture sends.
//
// Decoding never trusts the input: nesting depth, the number of values and
// integer widths are capped, and every length is checked against the
// packet, so a hostile packet costs at most a linear scan.
package krpc
