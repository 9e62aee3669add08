#!/usr/bin/env python3
"""DuckDB reads what `tracelane export --parquet` wrote and answers the
ranks questions itself; its answers must equal `tracelane ranks`'s.

    python -m venv /tmp/duck && /tmp/duck/bin/pip install duckdb==2.0.1
    /tmp/duck/bin/python tools/duckdb_ranks_check.py TRACELANE_BIN EXPORT_DIR TRACE_DIR

Runs the README's two queries over EXPORT_DIR (Hive-partitioned by rank):
the straggler of each step and the top collectives by skew, and compares
them with `TRACELANE_BIN ranks TRACE_DIR --format json`. Exits 1 on any
difference, printing both.
"""
import json
import subprocess
import sys

import duckdb

STRAGGLERS = """
WITH c AS (SELECT * FROM read_parquet('{d}/collectives/*/*.parquet', hive_partitioning = true)),
     s AS (SELECT * FROM read_parquet('{d}/steps/*/*.parquet', hive_partitioning = true)),
-- The rank that arrived last at the step's collectives, by the skews it caused.
by_collectives AS (
  SELECT step, rank, sum(skew_ns) AS blame_ns
  FROM c WHERE rank = last_rank AND step IS NOT NULL
  GROUP BY step, rank
  QUALIFY row_number() OVER (PARTITION BY step ORDER BY sum(skew_ns) DESC, rank) = 1),
-- Steps without matched collectives: the rank with the longest step.
by_wall AS (
  SELECT step, rank FROM s
  WHERE step IN (SELECT step FROM s GROUP BY step HAVING count(*) >= 2)
  QUALIFY row_number() OVER (PARTITION BY step ORDER BY wall_ns DESC, rank) = 1)
SELECT w.step, coalesce(b.rank, w.rank) AS straggler, coalesce(b.blame_ns, 0) AS blame_ns
FROM by_wall w LEFT JOIN by_collectives b USING (step)
ORDER BY w.step
"""

TOP_COLLECTIVES = """
SELECT name, "group", seq, skew_ns, last_rank, bytes
FROM read_parquet('{d}/collectives/*/*.parquet', hive_partitioning = true)
WHERE rank = last_rank
ORDER BY skew_ns DESC, "group", seq
LIMIT 10
"""


def main():
    binary, export_dir, trace_dir = sys.argv[1:4]
    con = duckdb.connect()
    stragglers = [
        {"step": int(s), "rank": int(r), "blame_us": b / 1000}
        for s, r, b in con.execute(STRAGGLERS.format(d=export_dir)).fetchall()
    ]
    top = [
        {"name": n, "group": g, "seq": int(q), "skew_us": k / 1000, "last_rank": int(l), "bytes": b}
        for n, g, q, k, l, b in con.execute(TOP_COLLECTIVES.format(d=export_dir)).fetchall()
    ]
    out = subprocess.run([binary, "ranks", trace_dir, "--format", "json"], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    want_stragglers = [{"step": s["step"], "rank": s["rank"], "blame_us": s["blame_us"]} for s in r["stragglers"]]
    want_top = [
        {k: c[k] for k in ("name", "group", "seq", "skew_us", "last_rank", "bytes")}
        for c in r["collectives"][:10]
    ]
    ok = stragglers == want_stragglers and top == want_top
    print(json.dumps({"duckdb": duckdb.__version__, "trace_dir": trace_dir, "steps": len(stragglers),
                      "stragglers_equal": stragglers == want_stragglers, "top_collectives_equal": top == want_top}))
    if not ok:
        print("duckdb:   ", json.dumps({"stragglers": stragglers, "top": top}), file=sys.stderr)
        print("tracelane:", json.dumps({"stragglers": want_stragglers, "top": want_top}), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
