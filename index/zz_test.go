package index

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestZZSizes(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, "/tmp/h4t/zz/index.db")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	files, _ := filepath.Glob("/tmp/h4t/gen/projects/*/*.jsonl")
	var srcs []Source
	for _, f := range files {
		srcs = append(srcs, Source{Path: f, From: "claude-code"})
	}
	ix.IndexFiles(ctx, srcs, func(s Source, r FileResult, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}, nil)
	t.Log("index", time.Since(start))
	ix.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	rows, err := ix.db.Query(`SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		var s int64
		rows.Scan(&n, &s)
		t.Log(n, s)
	}
	var c, tx int64
	ix.db.QueryRow(`SELECT sum(length(data)) FROM copies`).Scan(&c)
	ix.db.QueryRow(`SELECT sum(length(text)) FROM texts`).Scan(&tx)
	t.Log("copies", c, "texts", tx)
	st, _ := ix.Stats(ctx)
	t.Logf("%+v", st)
	for i := 0; i < 3; i++ {
		s := time.Now()
		_, tot, err := ix.Usage(ctx, UsageQuery{By: "day", Prices: DefaultPrices()})
		t.Log("usage", time.Since(s), tot.Requests, err)
	}
}
