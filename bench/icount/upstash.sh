#!/bin/bash
# Redis instructions per decision of @ratekit/upstash (or @ratekit/redis) over TCP, under callgrind: a private
# redis-server runs under valgrind while upstash-driver.mjs makes 300 × 16 decisions (16 in flight, one batch
# each), then shuts it down; the same run with PINGs instead of decisions is subtracted. Load-independent.
#   bench/icount/upstash.sh <upstash|redis> <fixed-window|sliding-window|token-bucket>
#   ROOT=bench/.against/<sha> bench/icount/upstash.sh upstash token-bucket    (another commit's build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count() {
  local port out
  port=$(node -e "const s=require('net').createServer().listen(0,()=>{console.log(s.address().port);s.close()})")
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" redis-server --port "$port" --save '' --appendonly no >/dev/null 2>&1 &
  local server=$!
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.2; done
  node "$here/upstash-driver.mjs" "$port" "$1" "$2"
  wait "$server" || true
  grep -oP '^summary: \K[0-9]+' "$out"
  rm -f "$out"
}
base=$(count ping none)
total=$(count "$1" "$2")
echo "$1 $2 redis-instructions/decision=$(( (total - base) / 4800 ))"
