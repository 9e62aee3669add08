#!/usr/bin/env bash
# Fails if the core crate pulls in a web dependency, natively or for wasm:
# the core must stay testable with plain `cargo test` and reusable by the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
banned='^(leptos|leptos_[a-z_]+|web-sys|js-sys|wasm-bindgen|wasm-bindgen-[a-z-]+|gloo|gloo-[a-z-]+) v'
status=0
for target in "" "--target wasm32-unknown-unknown"; do
  # shellcheck disable=SC2086
  tree=$(cargo tree -p tracelane-core -e normal,build --prefix none $target)
  if hits=$(grep -E "$banned" <<<"$tree"); then
    echo "tracelane-core depends on web crates (${target:-native}):" >&2
    echo "$hits" | sort -u >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "core has no web dependencies (native and wasm32)"
exit $status
