#!/bin/sh
# A newcomer's first hour on the dev network (docs/cli.md, "Tutorial"): a funded key of your own,
# a first message, a first post with a photo, the explorer. With the dev node running
# (npm start), from any directory:
#
#   examples/first-hour.sh holiday.jpg
#
# `kith` is the repository's bin/kith. KITH_HOME (default .kith in the repository) is the dev
# node's home, KITH_NODE (default http://localhost:8080) its URL, KITH_KEYSTORE (default
# ~/.kith/keys) your keystore; KITH_PASSPHRASE, when set, spares typing the passphrase. It creates
# keys dev, alice and bob and the username @bob_smith, so it runs once per keystore and chain.
set -eu
PATH="$(cd "$(dirname "$0")/.." && pwd)/bin:$PATH"
home=${KITH_HOME:-$(dirname "$0")/../.kith}
node_url=${KITH_NODE:-http://localhost:8080}
photo=${1:?usage: examples/first-hour.sh PHOTO.jpg}

# 1. A funded key: the dev account's key into your keystore, then 100 T from it to a key of yours
kith keys import "$home/dev_account.json" --name dev
kith keys new --name alice                         # prints alice's pubkey and address
kith send alice 100 --key dev                      # waits for the block
kith keys new --name bob
kith send bob 2.5 --key alice
kith balance bob                                   # 2.5 T (2500000 µT), 1 transaction

# 2. A first message, to a username
kith username register Bob_Smith --key bob         # @bob_smith; publishes bob's mailbox key first
kith msg send @bob_smith 'hello bob' --key alice   # sealed for each of bob's devices
kith msg inbox --key bob                           # one conversation per sender

# 3. A first post with a photo (the node scrubs it), followed, liked, trending
post_id=$(kith post publish 'Back home #travel' --attach "$photo" --key bob --json |
  sed -n 's/^ *"post_id": "\([0-9a-f]*\)",$/\1/p')
kith follow bob_smith --key alice                  # bob's posts enter alice's timeline
kith timeline --key alice
kith like "$post_id" --key alice
kith trending

# 4. The explorer: the same post, its photo and its like, in a browser
echo "open $node_url/#/post/$post_id"
