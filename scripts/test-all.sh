#!/usr/bin/env bash
# Runs every check and test tracelane has. This is the README's test command
# and what CI (.ci/run) runs. It installs what it needs when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain: wasm target, wasm-bindgen-cli, trunk, npm tools, chromium (installs what is missing)"
if ! command -v cargo >/dev/null; then
  echo "cargo is not installed: install Rust with rustup (https://rustup.rs)" >&2
  exit 1
fi
bash scripts/setup.sh --browser
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
# On a fresh CI machine incremental state is never reused: it only costs disk
# (1.1 GB of target/debug/incremental) and time.
if [[ "${CI:-}" == "true" ]]; then export CARGO_INCREMENTAL=0; fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "core has no web dependency"
bash scripts/check-core-deps.sh

step "no import circles between source files"
python3 tools/import_circles.py

step "clippy (native, all targets)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "clippy (wasm32: the core and the app)"
cargo clippy -p tracelane-core --target wasm32-unknown-unknown --locked -- -D warnings
cargo clippy -p tracelane-app --target wasm32-unknown-unknown --all-targets --locked -- -D warnings

step "docs build without warnings"
RUSTDOCFLAGS="-D warnings" cargo doc -p tracelane-core --no-deps --locked --quiet

step "tests (native)"
log=$(mktemp)
cargo test --workspace --locked 2>&1 | tee "$log"

step "wasm tests in headless Chromium"
CHROMEDRIVER=$(command -v chromedriver) cargo test -p tracelane-app --target wasm32-unknown-unknown --test web --locked 2>&1 | tee -a "$log"

step "release build of the app (dist/)"
cargo fetch --locked
trunk build --release --offline --locked --public-url ./
# What a visit downloads before the demo shows: the page and the import
# worker (the budget is for this code), then the demo's traces (data, in
# dist/demo/, fetched by the page; reported beside). The Parquet decoder
# (decoder*) is fetched only when a device profile is opened, the ranks
# workers (ranks*) when a run of many ranks is; each is reported on its own.
# 1,536 KiB until 2026-12-07; the Compare view's alignment by structure (its
# view in the page, the alignment in the import worker, which holds both
# traces' models) took the download from 1,499 to 1,601 KiB: README, "The
# first download".
gz() { cat "$@" | gzip -9 | wc -c; }
initial=$(gz $(ls dist/*.wasm dist/*.js | grep -v -e '/decoder' -e '/ranks'))
decoder=$(gz dist/decoder*.wasm dist/decoder*.js)
ranks=$(gz dist/ranks*.wasm dist/ranks*.js)
demo=$(cat dist/demo/* | wc -c)
echo "initial download: wasm+js $(( initial / 1024 )) KiB gzipped (budget 1664 KiB), then the demo's traces $(( demo / 1024 )) KiB; Parquet decoder on first profile: $(( decoder / 1024 )) KiB; ranks workers on first run: $(( ranks / 1024 )) KiB"
if (( initial > 1664 * 1024 )); then
  echo "the initial download is over its budget" >&2
  exit 1
fi

step "columnar export read by DuckDB (its answers equal tracelane ranks')"
cargo build --release --locked -q -p tracelane-cli
bash scripts/check-duckdb.sh

step "end-to-end tests (playwright-core + Chromium against dist/)"
node --test --test-concurrency=1 tests/e2e/ 2>&1 | tee "$log.e2e"
awk '/^# pass/ { p = $3 } /^# fail/ { f = $3 } END { printf "test result: ok. %d passed; %d failed;\n", p, f }' "$log.e2e" >> "$log"

step "CLI smoke test on a real trace"
cargo run -q --release --locked -p tracelane-cli -- ops tests/fixtures/torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz --top 3
cargo run -q --release --locked -p tracelane-cli -- diff tests/fixtures/torch-diff/rmsnorm_naive.pt.trace.json.gz \
  tests/fixtures/torch-diff/rmsnorm_fused.pt.trace.json.gz --region rmsnorm --top 3
if cargo run -q --release --locked -p tracelane-cli -- ops tests/fixtures/edge/image.png 2>/tmp/tracelane-err.txt; then
  echo "expected the CLI to refuse a PNG" >&2
  exit 1
fi
grep -q "not a trace: the file is a PNG image" /tmp/tracelane-err.txt
echo "bad input gives: $(cat /tmp/tracelane-err.txt)"

# One closing line for whoever reads the log: all cargo test binaries summed.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
rm -f "$log"
