#!/usr/bin/env bash
# The Neuron system profile's streaming import, natively: the attested
# Explorer shape (sorted keys, cpu_util first, LNC = 2, flow_id lists)
# repeated to ≥ 200 MB, imported by tracelane (`tracelane bench`: best of
# three, the import's peak memory over the file) and parsed by Node's
# JSON.parse in the same run as the baseline.
#   bash bench/neuron.sh            # 220 MB
#   MB=400 bash bench/neuron.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
cargo build --release --locked -q -p tracelane-cli
bin=target/release/tracelane
mb=${MB:-220}
f="$out/neuron_explorer_${mb}mb.json"
[ -s "$f" ] || python3 bench/gen_neuron_big.py "$f" --mb "$mb"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), $(uname -m); $(date -u +%Y-%m-%d)"
line=$("$bin" bench "$f" | tail -1)
IFS=, read -r _ json_mb import_s _tab total mbps slices _rest <<<"$line"
node_s=$(node --max-old-space-size=8192 bench/json_parse.js "$f")
# One import in a fresh process: its peak RSS holds the file (read whole)
# and the model; the import's own peak is what is above the file.
peak_kb=$(/usr/bin/time -f '%M' "$bin" info "$f" 2>&1 >/dev/null | tail -1)
file_b=$(stat -c %s "$f")
echo "file $(basename "$f"): ${json_mb} MB, ${slices} slices"
echo "tracelane: import ${import_s} s, import + op table ${total} s = ${mbps} MB/s (best of three)"
awk -v k="$peak_kb" -v b="$file_b" 'BEGIN { printf "one import (tracelane info): peak RSS %.0f MB = %.2f × the file; above the file it holds: %.2f × the file\n", k / 1024, k * 1024 / b, (k * 1024 - b) / b }'
awk -v m="$json_mb" -v n="$node_s" -v t="$total" 'BEGIN { printf "JSON.parse (baseline, same run): %.3f s = %.0f MB/s; tracelane / JSON.parse time: %.2f\n", n, m / n, t / n }'
