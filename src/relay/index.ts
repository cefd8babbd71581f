/**
 * The relay mailbox, the only door into src/relay. Clients upload NaCl-boxed envelopes
 * addressed to an X25519 key (POST /relay/broadcast); the node gives each its canonical id
 * and the server time, stores it durably in its own lmdb environment (`<dataDir>/relay`) for
 * SVC_MAILBOX_TTL_DAYS, and serves it from the recipient's inbox oldest first until the owner
 * deletes it with a signature linked through the identity registry, or it expires.
 *
 * `RelayService` emits `envelope` (gossip it), `inbox` (push it) and `delete` (gossip the
 * proof); peers' envelopes and deletes come back through `accept` and `acceptDeletion`, and
 * anti-entropy (`answerSyncRequest` on the serving side, `pullFromPeer` on the asking side,
 * built on the service's `digests`, `missingFrom`, `idsInBucket`, `wanted`, `envelopes`)
 * repairs what gossip lost. `RelayFees` checks paid envelopes (`fee_ut > 0`) and collects their
 * fees with RELAY_PROOF. Design, limits and wire forms: docs/relay.md.
 */
// Only what other folders import (the node's assembly, the API's routes, the real-time gateway, the
// gossip, the benchmarks); tests of this folder import the rest from the files they test.
export {
  RelayService, readRelayEnv, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGE_BYTES, MAX_ENVELOPES_PER_REQUEST, RelaySendSchema,
  type InboxEvent, type PeerOutcome, type ReadAuth, type RelayEnv
} from './service.js'
export { clientAddressKey } from './admission.js'
export {
  INBOX_AUTH_HEADER, READ_NONCE_TTL_MS, MAX_READ_NONCES_PER_MAILBOX, MAX_READ_NONCES_PER_CLIENT, MAX_READ_NONCES
} from './read-auth.js'
export { RelayFees } from './fees.js'
export { answerSyncRequest, pullFromPeer } from './sync.js'
export { RelayStore } from './store.js'
export {
  EnvelopeUploadSchema, OwnerProofSchema, InboxItemSchema, MAX_CIPHERTEXT_BYTES, MAX_SEND_PLAINTEXT_BYTES, SIGNED_TS_TOLERANCE_MS,
  canonicalId, plainEnvelopeUpload, type Envelope, type InboxItem
} from './envelope.js'
export { sealKeyFromEd25519, boxSeal, boxOpen, randomNonce, type SealKey } from './seal.js'
