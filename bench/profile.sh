#!/usr/bin/env bash
# Parquet device-profile import benchmark: tracelane's decoding, model and
# engine view (`tracelane bench-profile`) against pyarrow reading the same
# tables into Arrow (C++, the reference Parquet reader; decode only, no
# model), in the same run. Needs python3 with pyarrow.
#   bash bench/profile.sh            # 250k and 1M instructions
#   ROWS="100000 2000000" bash bench/profile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
py=${PYTHON:-python3}
cargo build --release --locked -q -p tracelane-cli
bin=target/release/tracelane
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo), $(uname -m); $(date -u +%Y-%m-%d)"
printf '%-28s %9s %12s %9s %8s %10s %8s %10s %12s %8s\n' profile parquet_MB instructions decode_s model_s engines_s total_s pyarrow_s 'decode/pyarrow' peak_MB
for n in ${ROWS:-250000 1000000}; do
  d="$out/profile_$n"
  [ -s "$d/Instruction.parquet" ] || "$py" bench/gen_device_profile.py "$n" "$d" >/dev/null
  IFS=, read -r _ mb ins dec model eng total _ peak <<<"$("$bin" bench-profile "$d" | tail -1)"
  pa_s=$("$py" -c '
import glob, sys, time
import pyarrow.parquet as pq
files = sorted(glob.glob(sys.argv[1] + "/*.parquet"))
best = min((lambda t0: ([pq.read_table(f, use_threads=False) for f in files], time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(3))
print(f"{best:.3f}")' "$d")
  ratio=$(awk -v a="$dec" -v b="$pa_s" 'BEGIN {printf "%.2fx", a/b}')
  printf '%-28s %9s %12s %9s %8s %10s %8s %10s %12s %8s\n' "$(basename "$d")" "$mb" "$ins" "$dec" "$model" "$eng" "$total" "$pa_s" "$ratio" "$peak"
done
