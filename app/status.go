package app

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/status"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "summarise a dataset: hashes by status, tier and failure class, table sizes, retry waves",
		UsageText: `infohash status --data DIR [--now TIME] [--format text|json]

   infohash status --data /srv/ih
   infohash status --data /srv/ih --format json | jq .retry_waves`,
		Description: `Reads the latest committed snapshot (no lock taken). The retry waves count
the hashes not yet fetched by when their next retry falls due.

` + exitcode.Help,
		Flags: []cli.Flag{dataFlag, nowFlag,
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or json"}},
		Action: func(c *cli.Context) error {
			data, err := requireData(c)
			if err != nil {
				return err
			}
			now, err := parseNow(c)
			if err != nil {
				return err
			}
			f := c.String("format")
			if f != "text" && f != "json" {
				return exitcode.BadInput(fmt.Errorf("--format %q: want text or json", f))
			}
			r, err := status.Run(c.Context, data, now)
			if err != nil {
				return err
			}
			if f == "json" {
				e := json.NewEncoder(c.App.Writer)
				e.SetIndent("", "  ")
				return e.Encode(r)
			}
			r.Print(c.App.Writer)
			return nil
		},
	}
}
