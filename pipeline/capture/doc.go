// Package capture is the first stage of the pipeline:
//
//	capture → dedup → plan-retries → fetch → merge → export
//
// It runs one or more DHT nodes and records every infohash they hear of as
// a schema.Observation:
//
//   - passively, from incoming get_peers and announce_peer queries (with
//     the announced port), answered as a well-behaved node would (replies
//     bounded per address, naming only nodes that answered the run: see
//     replies.go and confirm.go);
//   - actively, by a BEP 51 sample_infohashes walk over the nodes it
//     learns of, sampling each again only after the interval it asks for
//     (clamped to [60 s, 21600 s], [1 s, 21600 s] for a loopback or
//     private node; 21600 s when it gives none; a later
//     run on the same state directory waits for it too) and falling
//     back to find_node where a node does not support BEP 51. Only
//     public addresses are queried, unless the run was pointed into a
//     loopback or private range (see internal/reach).
//
// Each node owns its UDP socket: a read loop decodes packets with the
// bounded decoder of package formats/krpc, answers queries itself and records
// observations, and hands everything else to an anacrolix/dht server that
// keeps the routing table (bootstrap, refresh, pings). The routing table
// can be saved to a state directory so the next run rejoins warm.
//
// Run returns when Options.Duration has passed, Options.MaxObservations
// are written, or its context ends; it then drains the sockets until they
// have been quiet for a moment (bounded, see drainQuiet and drainMax) and
// flushes every observation it received into the Sink before returning.
package capture
