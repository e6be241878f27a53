package plan

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestCapsBoundQuota checks, for every small limit, share and reserve
// and every due count, what caps relies on: quota gives a pool no more
// when another pool has more due hashes, nor when the pool itself has
// more than limit (so a cap from the counts met so far is never below
// what the pool gets at the end); that pools kept within their caps
// hold at most limit candidates in all; and that with a limit of 2 or
// more each tier (hot: new and retried, cold) with due hashes gets a job.
func TestCapsBoundQuota(t *testing.T) {
	const most = 13 // due counts 0..most, above every limit
	for limit := range 11 {
		for _, share := range []float64{0, 0.2, 0.5, 0.7, 1} {
			for _, coldShare := range []float64{0.01, 0.3, 0.6, 1} {
				budget := coldReserve(limit, coldShare)
				name := fmt.Sprintf("limit=%d share=%v cold=%v", limit, share, coldShare)
				take := func(n [3]int) [3]int {
					a, b, c := quota(limit, budget, share, n[0], n[1], n[2])
					return [3]int{a, b, c}
				}
				for a := range most + 1 {
					for b := range most + 1 {
						for c := range most + 1 {
							n := [3]int{a, b, c}
							got := take(n)
							capped := caps(limit, budget, share, n)
							kept := 0
							for i := range n {
								if got[i] > capped[i] {
									t.Fatalf("%s due %v: pool %d takes %d, above its cap %d", name, n, i, got[i], capped[i])
								}
								kept += min(n[i], capped[i])
								for j := range n {
									if j == i || n[j] == most {
										continue
									}
									more := n
									more[j]++
									if after := take(more)[i]; after > got[i] {
										t.Fatalf("%s due %v: pool %d takes %d, and %d when pool %d has one more",
											name, n, i, got[i], after, j)
									}
								}
							}
							if limit >= 2 && (a+b > 0 && got[0]+got[1] == 0 || c > 0 && got[2] == 0) {
								t.Fatalf("%s due %v: quota %v leaves a tier with due hashes without a job", name, n, got)
							}
							if kept > limit {
								t.Fatalf("%s due %v: pools within caps %v keep %d, above limit %d",
									name, n, capped, kept, limit)
							}
						}
					}
				}
			}
		}
	}
}

// TestCandSize keeps a candidate as small as heap.go says: a pass holds
// up to --limit of them.
func TestCandSize(t *testing.T) {
	if n := unsafe.Sizeof(cand{}); n > 72 {
		t.Errorf("a cand takes %d bytes, want at most 72", n)
	}
}
