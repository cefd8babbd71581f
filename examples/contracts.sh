#!/bin/sh
# Deploying, calling and reading contracts with the command line (docs/contracts.md), from any
# directory, against KITH_NODE (default http://localhost:8080). It needs a funded key named alice
# in your keystore (examples/first-hour.sh makes one) and registers @alice_01, once per chain.
# contracts/build/ holds the compiled examples; `npm run contract:build` compiles them again.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
PATH="$repo/bin:$PATH"

counter=$(kith contract deploy "$repo/contracts/build/counter.wasm" --name counter --version 1.0.0 --key alice --json |
  sed -n 's/^ *"contract_id": "\([0-9a-f]*\)",$/\1/p')   # readable: "deployed counter as <id> in block 12; methods: get, increment"
kith contract call "$counter" increment --key alice      # outcome, gas used and cost, "returned 1"
kith contract state "$counter" count                     # count: 0x0100000000000000 (u64 1)
kith contract call username_registry register '["alice_01"]' --amount 10000ut --key alice
kith contract state username_registry name:alice_01      # alice's pubkey, as text
kith contract logs username_registry                     # register alice_01 <pubkey>
