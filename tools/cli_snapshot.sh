#!/usr/bin/env bash
# Writes every CLI command's output (stdout, stderr, exit status) on every
# fixture trace into OUT_DIR, one file per (command, input). Run it before and
# after a change that must not alter behaviour, then `diff -r BEFORE AFTER`.
#   tools/cli_snapshot.sh path/to/tracelane OUT_DIR
set -u
bin=$(realpath "$1"); out=$(realpath -m "$2")
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
shared=../shared/fixtures

run() { # name, args...
  local name=$1; shift
  local f="$out/$name"
  "$bin" "$@" >"$f.out" 2>"$f.err.raw"
  echo "exit $?" >>"$f.out"
  # Folders are read in parallel: their per-file messages come in any order.
  sort "$f.err.raw" >"$f.err" && rm "$f.err.raw"
}
key() { echo "$1" | sed 's#^\.\./##; s#[/ ]#_#g'; }

# The local corpus of tests/corpus.md too, when TRACELANE_HTA_CORPUS names it.
mapfile -t files < <(find tests/fixtures "$shared" ${TRACELANE_HTA_CORPUS:+"$TRACELANE_HTA_CORPUS"} -maxdepth 3 -type f \( -name '*.json' -o -name '*.gz' -o -name '*.pftrace' -o -name '*.pb' -o -name '*.png' -o -name '*.txt' \) | sort)
for t in "${files[@]}"; do
  k=$(key "$t")
  run "ops.table.$k" ops "$t"
  run "ops.json.$k" ops "$t" --format json
  run "ops.csv.shape.$k" ops "$t" --format csv --by-shape
  run "ops.md.$k" ops "$t" --format md --sort device_self --top 5
  run "info.$k" info "$t" --format json
  run "info.text.$k" info "$t"
  run "analyze.$k" analyze "$t" --format json
  run "analyze.table.$k" analyze "$t"
  run "analyze.hta.$k" analyze "$t" --hta --format json
  run "analyze.hta05.$k" analyze "$t" --hta-version 0.5 --format json
  run "analyze.steps.$k" analyze "$t" --scope steps --format md
  run "roofline.$k" roofline "$t" --format json
  run "insights.$k" insights "$t" --format json
  run "insights.md.$k" insights "$t" --format md
  run "regions.$k" regions "$t" --format json
  run "memory.$k" memory "$t" --format json
  case "$t" in *.pftrace) run "engines.$k" engines "$t" --format json;; esac
done

# Directories: Neuron device profiles, rank sets, whole folders.
mapfile -t dirs < <(find tests/fixtures "$shared" -mindepth 1 -type d | sort)
for d in "${dirs[@]}"; do
  k=$(key "$d")
  run "engines.$k" engines "$d" --format json
  run "ranks.$k" ranks "$d" --format json
  run "ranks.md.$k" ranks "$d" --format md
  run "ops.dir.$k" ops "$d" --format json
  rm -rf "$out/.pq"
  (cd "$out" && run "export.$k" export "$root/$d" --parquet .pq --job snap)
  sed -i -E 's/ in [0-9.]+ s$/ in (time) s/' "$out/export.$k.err"
  if [ -d "$out/.pq" ]; then
    (cd "$out/.pq" && find . -type f | sort | xargs sha256sum) >"$out/export.$k.files"
  fi
done
rm -rf "$out/.pq"

# Comparisons and the CI gate over pairs from the same folder.
mapfile -t pairs < <(find tests/fixtures/torch-cpu "$shared/torch-cpu" -name '*.json*' | sort | head -8)
for ((i = 0; i + 1 < ${#pairs[@]}; i++)); do
  a=${pairs[$i]}; b=${pairs[$((i + 1))]}; k=$(key "$a")
  run "compare.$k" compare "$a" "$b" --format json
  run "compare.md.$k" compare "$a" "$b" --format md
  run "gate.$k" insights --baseline "$a" "$b" --fail-on-regression 5 --format json
done
(cd "$out" && run "synth" synth .synth --ranks 2 --mb 1 --seed 7)
(cd "$out/.synth" 2>/dev/null && find . -type f | sort | xargs sha256sum) >"$out/synth.files"
rm -rf "$out/.synth"
run "usage" --help
run "bad" nosuchcommand
