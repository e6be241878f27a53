// Command infohash crawls the BitTorrent Mainline DHT as scheduled batch
// passes over Parquet snapshots partitioned by hash prefix.
package main

import (
	"os"

	"github.com/infohash/infohash/app"
	"github.com/infohash/infohash/internal/dhtboot"
)

func main() {
	dhtboot.QuietLibraryLogs()
	os.Exit(app.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
