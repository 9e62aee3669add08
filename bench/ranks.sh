#!/usr/bin/env bash
# Many-ranks benchmark: `tracelane ranks` (import every rank on every core,
# summarise, drop each model; then match collectives) and `tracelane export
# --parquet` on generated runs of 8, 32 and 64 ranks (`tracelane synth
# --ranks N --mb MB`), against the baseline measured in the same run: one
# rank of the same set imported alone. Reported: total wall time, its ratio
# to N × one rank (below 1 is the parallel speed-up), peak resident memory
# and its ratio to one rank's (the memory a set costs over one trace).
#   bash bench/ranks.sh                    # 8 32 64 ranks × 50 MB
#   RANKS="8 32" MB=10 bash bench/ranks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
cargo build --release --locked -q -p tracelane-cli
bin=target/release/tracelane
mb=${MB:-50}
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), $(uname -m); $(date -u +%Y-%m-%d)"
measure() { # prints "seconds peak_MB"
  /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%s %.0f", $1, $2/1024}'
}
printf '%6s %8s %10s %10s %12s %10s %12s %10s\n' ranks json_MB ranks_s vs_N×1 peak_MB vs_1 export_s export_MB
for n in ${RANKS:-8 32 64}; do
  d="$out/ranks_${n}x${mb}"
  [ -s "$d/rank$((n - 1)).pt.trace.json" ] || "$bin" synth "$d" --ranks "$n" --mb "$mb" 2>/dev/null
  json_mb=$(du -sm "$d" | cut -f1)
  read -r one_s one_mb <<<"$(measure "$bin" ranks "$d/rank0.pt.trace.json")"
  read -r all_s all_mb <<<"$(measure "$bin" ranks "$d")"
  rm -rf "$d.parquet"
  read -r ex_s _ <<<"$(measure "$bin" export "$d" --parquet "$d.parquet")"
  ex_mb=$(du -sm "$d.parquet" | cut -f1)
  printf '%6s %8s %10s %10s %12s %10s %12s %10s\n' "$n" "$json_mb" "$all_s" \
    "$(awk -v a="$all_s" -v b="$one_s" -v n="$n" 'BEGIN {printf "%.2f", a/(n*b)}')" "$all_mb" \
    "$(awk -v a="$all_mb" -v b="$one_mb" 'BEGIN {printf "%.2f", a/b}')" "$ex_s" "$ex_mb"
  rm -rf "$d.parquet"
done
