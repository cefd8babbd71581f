#!/bin/sh
# A look at the dev network that `npm start` runs: the chain's figures, then the dev account.
# From any directory; KITH_NODE (default http://localhost:8080) and KITH_HOME (default .kith in
# the repository) say where the node and its home are.
set -eu
node_url=${KITH_NODE:-http://localhost:8080}
home=${KITH_HOME:-$(dirname "$0")/../.kith}

curl -fsS "$node_url/api/netstats"; echo                    # height, transactions, supply, validators
dev_pub=$(sed -n 's/^ *"pub_key": "\([0-9a-f]*\)",$/\1/p' "$home/dev_account.json")
curl -fsS "$node_url/api/address/$dev_pub"; echo            # the dev account: 1,000,000 T at first
