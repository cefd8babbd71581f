#!/bin/sh
# A local network of validators on 127.0.0.1: writes one home per validator, starts every node
# (each logs to OUTPUT/nodeI.log), shows the first node's peers once it has found them all, and
# stops them all on Ctrl-C. From any directory:
#
#   examples/local-testnet.sh [VALIDATORS (4)] [OUTPUT (net)] [BASE_PORT (26000)]
#
# Node i serves HTTP on BASE_PORT+2i and libp2p on BASE_PORT+2i+1. `kith` is the repository's
# bin/kith; its warning says how to give a key tokens at genesis (--alloc).
set -eu
PATH="$(cd "$(dirname "$0")/.." && pwd)/bin:$PATH"
validators=${1:-4}
output=${2:-net}
base_port=${3:-26000}

kith testnet --validators "$validators" --output "$output" --base-port "$base_port" > /dev/null
pids=''
trap 'kill $pids 2> /dev/null; wait; exit 0' INT TERM
i=0
while [ "$i" -lt "$validators" ]; do
  kith start --home "$output/node$i" > "$output/node$i.log" 2>&1 &
  pids="$pids $!"
  i=$((i + 1))
done

# ready once the first node has found the others (an idle chain makes no blocks but a heartbeat
# every 30 s; a transaction gets its block at once)
until [ "$(curl -fsS "http://127.0.0.1:$base_port/api/peers" 2> /dev/null | grep -o '"peer_id"' | wc -l)" -ge $((validators - 1)) ]; do
  for pid in $pids; do
    kill -0 "$pid" 2> /dev/null || { echo "a node stopped; its log is in $output/" >&2; kill $pids 2> /dev/null; exit 1; }
  done
  sleep 1
done
curl -fsS "http://127.0.0.1:$base_port/api/peers"; echo   # each peer with its version and height
echo "running; Ctrl-C stops the $validators nodes"
wait
