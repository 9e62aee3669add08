#!/usr/bin/env bash
# Serves the app on http://127.0.0.1:8080 (PORT to change).
# Until the leptos app lands this serves the placeholder page; the numbers
# are available today from the CLI (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-8080}"
echo "tracelane: http://127.0.0.1:$port/"
exec python3 -m http.server --bind 127.0.0.1 "$port"
