#!/usr/bin/env bash
# Native import benchmark: tracelane's import + link + op table against
# Node's JSON.parse on the same files, in the same run.
#   bash bench/run.sh            # hta_large (54 MB) + synthetic 100 MB and 400 MB
#   SIZES="100 400 1000" bash bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
cargo build --release --locked -q -p tracelane-cli
bin=target/release/tracelane
files=()
if [ ! -s "$out/hta_large_216k_events.json" ]; then
  gzip -dc tests/fixtures/public/hta_large_216k_events.json.gz > "$out/hta_large_216k_events.json"
fi
files+=("$out/hta_large_216k_events.json")
for mb in ${SIZES:-100 400}; do
  f="$out/synth_${mb}mb.json"
  [ -s "$f" ] || "$bin" synth "$f" --mb "$mb" --seed 1
  files+=("$f")
done
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), $(uname -m); $(date -u +%Y-%m-%d)"
printf '%-44s %8s %10s %9s %10s %9s %8s %9s %9s\n' file MB import_s 'MB/s' 'node_s' 'node MB/s' ratio model/json peak_MB
for f in "${files[@]}"; do
  line=$("$bin" bench "$f" | tail -1)
  IFS=, read -r _ mb _imp _tab total mbps _slices _model ratio_model peak _import_peak <<<"$line"
  node_s=$(node --max-old-space-size=8192 bench/json_parse.js "$f")
  node_mbps=$(awk -v m="$mb" -v s="$node_s" 'BEGIN {printf "%.0f", m/s}')
  speedup=$(awk -v a="$node_s" -v b="$total" 'BEGIN {printf "%.2fx", a/b}')
  printf '%-44s %8s %10s %9s %10s %9s %8s %9s %9s\n' "$(basename "$f")" "$mb" "$total" "$mbps" "$node_s" "$node_mbps" "$speedup" "$ratio_model" "$peak"
done
