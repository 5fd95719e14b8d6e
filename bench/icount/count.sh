#!/bin/bash
# Instructions per decision under callgrind: the difference between a run of
# 400k and a run of 100k decisions, divided by 300k, so start-up, module
# loading, key creation and warm-up cancel out. Repeatable under load (unlike
# wall-clock rates); ±30 instructions between identical runs.
#
#   bench/icount/count.sh <contender> <keyCount>      (see subject.mjs for contenders)
#   CORE=/path/to/index.js bench/icount/count.sh gcra 1
#   NODE_FLAGS=--max-inlined-bytecode-size-cumulative=3000 bench/icount/count.sh policy 1   (experiments)
#
# The young generation is fixed at 16 MB (the size V8 grows it to under a
# steady allocation rate), so the number of scavenges does not depend on how
# far it had grown by the time counting started.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null node ${NODE_FLAGS:-} --single-threaded --min-semi-space-size=16 --max-semi-space-size=16 \
    "$here/subject.mjs" "$1" "$2" "$3" 2>&1 | grep -oP 'Collected : \K[0-9]+'
}
a=$(run "$1" 100000 "$2")
b=$(run "$1" 400000 "$2")
echo "$1 keys=$2 instructions/decision=$(( (b - a) / 300000 ))"
