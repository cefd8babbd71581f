// Submitting a transfer with the client library: 5 T from the dev account to a new account.
import { newAccount, transfer } from '../dist/src/client/index.js'
import { client, me } from './dev-account.mjs'

const friend = newAccount()
const tx = transfer(me, friend.pub, 5_000_000)          // 5 T, minimum fee 1000 µT
console.log(await client.submit(tx))                   // { id, status: 'accepted' }
console.log(await client.waitForConfirmation(tx.id))    // detail with block_index, block_hash
