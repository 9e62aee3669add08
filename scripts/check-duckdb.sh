#!/usr/bin/env bash
# DuckDB reads `tracelane export --parquet` of the test sets and answers the
# ranks questions with the README's queries; the answers must equal
# `tracelane ranks`'s. Installs DuckDB's Python package (pinned) in a venv
# under target/ when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/duckdb-venv
if ! "$venv/bin/python" -c "import duckdb" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q duckdb==2.0.1
fi
bin=target/release/tracelane
[ -x "$bin" ] || cargo build --release --locked -q -p tracelane-cli
for set in synth-ranks torch-gloo; do
  out=$(mktemp -d)
  "$bin" export "tests/fixtures/$set" --parquet "$out" 2>/dev/null
  "$venv/bin/python" tools/duckdb_ranks_check.py "$bin" "$out" "tests/fixtures/$set"
  rm -rf "$out"
done
