#!/usr/bin/env bash
# Installs what is missing, builds the app and serves it at
# http://127.0.0.1:8080 (PORT to change). It opens on the built-in demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
cargo fetch --locked
trunk build --release --offline --locked --public-url ./
port="${PORT:-8080}"
echo "tracelane: http://127.0.0.1:$port/"
exec python3 -m http.server --bind 127.0.0.1 --directory dist "$port"
