// Package krpc decodes and encodes the DHT's KRPC messages (BEP 5, BEP 51),
// the wire format of the DHT: a walk with the bounded, allocation-free
// decoder of package formats/bencode that picks out the fields the stages
// use and skips the rest, and append-style encoders, on formats/bencode's
// Encoder, for the replies and queries capture sends. capture decodes
// every packet its nodes read with it; fetch decodes the datagrams its DHT
// node sends and reads with it, to note which nodes answered (heardConn).
//
// Decoding never trusts the input: nesting depth, the number of values,
// integer widths and string lengths are capped (Parse's limits), and every
// length is checked against the packet, so a hostile packet costs at most
// a linear scan.
package krpc
