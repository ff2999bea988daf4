package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/internal/fanout"
)

func newServerCommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:         "server stat [SERVER...] [--json]",
		Short:       "the state of each ZooKeeper server",
		Annotations: brief("stat [SERVER...]"),
		Long: `
  server stat [SERVER...]   mode, zxid, node count, connections and latency of each server

Asks each server (host:port; by default each server of --zk) with
ZooKeeper's four-letter words: srvr, and with --json also mntr, whose
key-value pairs come along as they are. A server that does not answer, or
whose 4lw.commands.whitelist does not allow srvr, is shown without figures,
and zkcoord exits 1 once every server is shown, naming what failed.

zkcoord connects first, as every command does, so a server of --zk must be
serving; the servers asked may be others (SERVER...), and need not serve.

Example:
  zkcoord server stat --zk zk1:2181,zk2:2181,zk3:2181
`,
		RunE: subcommandRequired,
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print a JSON array, with each server's mntr")
	cmd.AddCommand(&cobra.Command{
		Use:   "stat [SERVER...]",
		Short: "mode, zxid, node count, connections and latency of each server",
		Args: func(cmd *cobra.Command, args []string) error {
			for _, s := range args {
				if _, _, err := net.SplitHostPort(s); err != nil {
					return cli.Usagef("server stat: %q: want host:port", s)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServerStat(a, args, asJSON)
		},
	})
	return cmd
}

// serverStatJSON is what server stat learns of a server: the fields of
// srvr, with --json mntr's, or why it did not answer.
type serverStatJSON struct {
	Server      string            `json:"server"`
	Mode        string            `json:"mode,omitempty"`
	Version     string            `json:"version,omitempty"`
	Zxid        string            `json:"zxid,omitempty"`
	NodeCount   int64             `json:"node_count"`
	Connections int64             `json:"connections"`
	Outstanding int64             `json:"outstanding"`
	Latency     string            `json:"latency_ms,omitempty"` // min/avg/max
	Mntr        map[string]string `json:"mntr,omitempty"`
	Error       string            `json:"error,omitempty"`
}

func runServerStat(a *app, servers []string, asJSON bool) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	if len(servers) == 0 {
		servers = sess.Config().Servers
	}
	stats := make([]serverStatJSON, len(servers))
	fanout.Each(len(servers), len(servers), func(i int) {
		stats[i] = serverStat(ctx, sess, servers[i], asJSON)
	})
	var failed []string
	for _, s := range stats {
		if s.Error != "" {
			failed = append(failed, s.Server+": "+s.Error)
		}
	}
	if asJSON {
		if err := a.printJSON(stats); err != nil {
			return err
		}
	} else {
		tw := cli.Table(a.Stdout)
		fmt.Fprintln(tw, "SERVER\tMODE\tZXID\tNODES\tCONNECTIONS\tOUTSTANDING\tLATENCY MS (MIN/AVG/MAX)\tVERSION")
		for _, s := range stats {
			if s.Error != "" {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\n", s.Server)
				continue
			}
			version, _, _ := strings.Cut(s.Version, "-")
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", s.Server, s.Mode, s.Zxid, s.NodeCount, s.Connections,
				s.Outstanding, s.Latency, version)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d servers did not answer: %s", len(failed), len(stats), strings.Join(failed, "; "))
	}
	return nil
}

// serverStat asks server for srvr and, with mntr, mntr.
func serverStat(ctx context.Context, sess *zkcoord.Session, server string, mntr bool) serverStatJSON {
	st := serverStatJSON{Server: server}
	reply, err := sess.FourLetter(ctx, server, "srvr")
	if err != nil {
		st.Error = "srvr: " + cause(err).Error()
		return st
	}
	if err := parseSrvr(reply, &st); err != nil {
		st.Error = err.Error()
		return st
	}
	if mntr {
		reply, err := sess.FourLetter(ctx, server, "mntr")
		if err != nil {
			st.Error = "mntr: " + cause(err).Error()
			return st
		}
		st.Mntr = keyValues(reply, "\t")
		if len(st.Mntr) == 0 {
			st.Error = "mntr: " + firstLine(reply)
		}
	}
	return st
}

// parseSrvr reads the "Name: value" lines of a srvr reply into st. A reply
// without a mode is a refusal (a word not in the whitelist, a server not
// serving), reported by its first line.
func parseSrvr(reply string, st *serverStatJSON) error {
	m := keyValues(reply, ": ")
	num := func(k string) int64 { n, _ := strconv.ParseInt(m[k], 10, 64); return n }
	st.Version, st.Latency, st.Zxid, st.Mode = m["Zookeeper version"], m["Latency min/avg/max"], m["Zxid"], m["Mode"]
	st.Connections, st.Outstanding, st.NodeCount = num("Connections"), num("Outstanding"), num("Node count")
	if st.Mode == "" {
		return fmt.Errorf("srvr: %s", firstLine(reply))
	}
	return nil
}

// keyValues reads the lines of a four-letter word's reply that hold a name
// and a value separated by sep, the value trimmed.
func keyValues(reply, sep string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(reply, "\n") {
		if k, v, ok := strings.Cut(line, sep); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// firstLine returns the first line of a reply, or a note that it is empty.
func firstLine(reply string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(reply), "\n")
	if line == "" {
		return "empty reply"
	}
	return line
}
