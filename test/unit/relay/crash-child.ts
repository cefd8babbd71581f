/**
 * Child process of the kill -9 test (store.test.ts): stores envelopes 20 at a time, printing
 * each one as soon as `put` resolves, until the parent kills it. A second argument sets the store's
 * merge threshold.
 */
import { RelayStore } from '../../../src/relay/index.js'
import { envelopeFromUpload } from '../../../src/relay/envelope.js'
import { newClient, sealEnvelope } from './helpers.js'

const dir = process.argv[2]
// with a small merge threshold the journal is merged into the mailbox table again and again meanwhile
const mergeMin = process.argv[3] === undefined ? undefined : Number(process.argv[3])
const store = RelayStore.open(dir, { ttlMs: 86_400_000, clock: { now: Date.now }, mergeMin, limits: { maxPerMailbox: 20_000, maxPerSender: 20_000 } })
const alice = newClient()
const bob = newClient()
for (let round = 0; round < 500; round++) {
  await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const env = envelopeFromUpload(sealEnvelope(alice, bob.pub, `message ${round}/${i}`), Math.floor(Date.now() / 1000))
    if (await store.put(env)) process.stdout.write(JSON.stringify(env) + '\n')
  }))
}
