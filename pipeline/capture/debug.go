package capture

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
)

// debugNodes logs each node's own counters at debug level (--debug), once
// its read loop has ended: its address and ID, the packets, queries and
// responses it read, the observations it recorded and its routing
// table's size. The run's summary adds them all up; these show a node
// that heard nothing (a port blocked, an ID far from the traffic).
func debugNodes(log *slog.Logger, nodes []*node) {
	if log == nil || !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	for i, n := range nodes {
		log.Debug("capture: node", "node", i, "addr", fmt.Sprint(n.sock.LocalAddr()), "id", hex.EncodeToString(n.id[:]),
			"packets_in", n.packetsIn, "queries_in", n.queriesIn, "responses_in", n.responsesIn,
			"observations", n.observed, "routing_table", n.tbl.Load().len())
	}
}
