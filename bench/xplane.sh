#!/usr/bin/env bash
# XPlane import, natively, against xprof's own converter in the same run.
# The file: a real jax[cpu] recording's planes repeated to ~300 MB
# (bench/make_big_xplane.py; its HLO modules once). tracelane: import
# best of three (`tracelane bench`), then `tracelane ops` (import + the
# HLO and framework op tables) in a fresh process; xprof: its
# `framework_op_stats` and `trace_viewer@` conversions of the same file.
#   XPROF_PY=/path/to/venv/bin/python bash bench/xplane.sh    # venv: pip install xprof
#   MB=100 bash bench/xplane.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
cargo build --release --locked -q -p tracelane-cli
bin=target/release/tracelane
mb=${MB:-300}
f="$out/xplane_mlp_${mb}mb.xplane.pb"
[ -s "$f" ] || python3 bench/make_big_xplane.py tests/fixtures/jax-cpu/mlp_train.xplane.pb "$f" --mb "$mb"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), $(uname -m); $(date -u +%Y-%m-%d)"
line=$("$bin" bench "$f" | tail -1)
IFS=, read -r _ file_mb import_s _tab total mbps slices _rest <<<"$line"
echo "file $(basename "$f"): ${file_mb} MB, ${slices} slices"
echo "tracelane: import ${import_s} s (${mbps} MB/s with the op table, best of three)"
start=$(date +%s.%N)
peak_kb=$(/usr/bin/time -f '%M' "$bin" ops "$f" 2>&1 >/dev/null | tail -1)
ops_s=$(echo "$(date +%s.%N) - $start" | bc)
echo "tracelane ops (fresh process: read, import, HLO + framework op tables): ${ops_s} s, peak RSS $((peak_kb / 1024)) MB"
if [ -n "${XPROF_PY:-}" ]; then
  while IFS=, read -r tool secs bytes; do
    echo "xprof $tool: ${secs} s; tracelane ops / xprof: $(echo "scale=3; $ops_s / $secs" | bc)"
  done < <("$XPROF_PY" bench/xprof_convert.py "$f" framework_op_stats trace_viewer@ 2>/dev/null)
fi
