#!/usr/bin/env bash
# Runs benchmarks in a baseline checkout (built: npm run build && bash runtime/build.sh) and in this
# one, in alternating order per round (base first in odd rounds), each checkout running its own
# dist/bench scripts; every run's output goes to .tmp/before-after/<bench>.<base|this>.<round>.log.
#   usage: ROUNDS=3 scripts/bench-before-after.sh <baseline checkout> reducers notifications ...
# Environment variables (PROJ_KEYS, NOTIFY_PHASES, ...) reach both alike.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(cd "$1" && pwd); shift
rounds=${ROUNDS:-3}
out=.tmp/before-after
mkdir -p "$out"
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order=(base this); else order=(this base); fi
  for bench in "$@"; do
    for which in "${order[@]}"; do
      dir=$([ "$which" = base ] && echo "$base" || pwd)
      echo "round $r: $bench ($which) — $(date -u +%H:%M:%S)"
      (cd "$dir" && node "dist/bench/$bench.bench.js") >"$out/$bench.$which.$r.log" 2>&1 || echo "  failed: see $out/$bench.$which.$r.log"
    done
  done
done
