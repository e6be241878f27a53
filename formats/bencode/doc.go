// Package bencode is the one bounded bencode walker of infohash, and its
// one general encoder. The Decoder reads untrusted bencode in place, token
// by token, with caps on nesting depth, the number of values, integer
// digits and string lengths. It never allocates (but for an error) and
// never recurses, so a hostile input costs at most a linear scan. The
// Encoder appends bencode token by token: formats/krpc writes DHT queries
// and replies with it, and fetch its BEP 9/10 messages to peers.
//
// Its callers differ in what they tolerate, and say so in Limits:
// formats/krpc walks DHT packets with small caps (depth 10, 1000 values,
// 18-digit integers, strings under 10 MB), and formats/infodict checks info
// dictionaries and BEP 9/10 messages from peers with depth 64 and no other
// cap than the input's size. Both share the grammar: integers and string
// lengths in canonical decimal (no leading zeros, no "-0", within int64),
// dictionary keys that are strings, every length inside the input.
// Neither asks for sorted dictionary keys, which DHT nodes and old
// torrents in the wild do not always send, and the Decoder does not refuse
// a repeated key either: a caller that needs canonical key order or unique
// keys checks it itself (infodict.Parse refuses repeated keys).
package bencode
