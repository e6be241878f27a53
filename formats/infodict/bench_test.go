package infodict

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// benchInfo is an info dictionary of files files of random sizes and
// 8 KB of piece hashes (~9 KB, as merge's BenchmarkReadOKResults has),
// made hybrid (a file tree of the same files, pad files between the v1
// ones) when hybrid.
func benchInfo(files int, hybrid bool) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	const plen = 262144
	var list, tree []byte
	var end int64
	for f := range files {
		p := fmt.Sprintf("file-%03d.bin", f)
		n := rng.Int64N(1 << 30)
		if hybrid && end%plen != 0 {
			gap := plen - end%plen
			list = fmt.Appendf(list, "d4:attr1:p6:lengthi%de4:pathl4:.pad%d:%dee", gap, len(fmt.Sprint(gap)), gap)
			end += gap
		}
		list = fmt.Appendf(list, "d6:lengthi%de4:pathl4:data%d:%see", n, len(p), p)
		tree = fmt.Appendf(tree, "%d:%sd0:d6:lengthi%de11:pieces root32:%see", len(p), p, n, root32)
		end += n
	}
	info := []byte("d")
	if hybrid {
		info = fmt.Appendf(info, "9:file treed4:datad%see", tree)
	}
	info = fmt.Appendf(info, "5:filesl%se", list)
	if hybrid {
		info = fmt.Appendf(info, "12:meta versioni2e")
	}
	info = fmt.Appendf(info, "4:name7:torrent12:piece lengthi%de6:pieces8000:", plen)
	pieces := make([]byte, 8000)
	for k := range pieces {
		pieces[k] = byte(rng.Uint32())
	}
	return append(append(info, pieces...), 'e')
}

// BenchmarkParseAs decodes a v1 and a hybrid info dictionary of 20 files
// under a v1 hash, as fetch and merge do.
func BenchmarkParseAs(b *testing.B) {
	for _, hybrid := range []bool{false, true} {
		info := benchInfo(20, hybrid)
		b.Run(fmt.Sprintf("hybrid=%v", hybrid), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if m, err := ParseAs(info, schema.HashV1); err != nil || *m.FileCount != 20 {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
