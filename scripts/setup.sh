#!/usr/bin/env bash
# Installs what building, serving and testing the app needs, skipping what
# is already there: the wasm32 target, wasm-bindgen-cli at Cargo.lock's
# version, Trunk 0.21.14, the npm tools (playwright-core, axe-core, binaryen's
# wasm-opt) and, when asked for (--browser), Debian's Chromium + driver.
# Nothing here downloads prebuilt binaries from outside the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=0
[ "${1:-}" = "--browser" ] && want_browser=1

say() { printf '  setup: %s\n' "$*"; }

rustup component add rustfmt clippy >/dev/null 2>&1 || true
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]; then
  say "installing wasm-bindgen-cli $wb_version (a few minutes)"
  # No --locked: its own lockfile pins a crate version the registry lacks.
  cargo install wasm-bindgen-cli --version "$wb_version"
fi

if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "0.21.14" ]; then
  say "installing trunk 0.21.14 (about ten minutes)"
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install trunk --version 0.21.14 --locked
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] || [ ! -f node_modules/axe-core/axe.min.js ]; then
  say "installing npm tools (playwright-core, binaryen, axe-core)"
  npm ci --no-audit --no-fund
fi

if [ $want_browser = 1 ] && { ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; }; then
  say "installing Debian's chromium and chromium-driver"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi
