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
export {
  RelayService, mailboxTtlMs, readRelayEnv, DEFAULT_SENDER_RPS, DEFAULT_TTL_DAYS, DAY_MS, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_PAGE_BYTES,
  DEFAULT_SWEEP_INTERVAL_MS, DEFAULT_SWEEP_BATCH, MAX_ENVELOPES_PER_REQUEST, RelaySendSchema,
  type RelayServiceOptions, type IdentityResolver, type InboxEvent, type RelayEvents, type PeerOutcome,
  type InboxQuery, type InboxResult, type BroadcastOptions, type RelayEnv, type ReadAuth
} from './service.js'
export { MailboxAdmission, DEFAULT_ADMISSION, clientAddressKey, type AdmissionLimits, type Admitted } from './admission.js'
export {
  ReadNonces, INBOX_AUTH_HEADER, READ_NONCE_TTL_MS, MAX_READ_NONCES_PER_MAILBOX, MAX_READ_NONCES_PER_CLIENT, MAX_READ_NONCES,
  inboxReadText, inboxAuthHeader, parseInboxAuthHeader, type InboxReadEndpoint, type InboxAuth
} from './read-auth.js'
export { RelayFees, DEFAULT_COLLECT_INTERVAL_MS, type FeeClaim, type FeeNode, type RelayFeesOptions } from './fees.js'
export { RelaySyncRequestSchema, answerSyncRequest, pullFromPeer, type RelaySyncRequest, type SyncRoundResult } from './sync.js'
export {
  RelayStore, BUCKET_SECONDS, DEFAULT_LIMITS, bucketOf,
  type Clock, type RelayLimits, type RelayStoreOptions, type InboxPage, type InboxOptions, type BucketDigest, type BucketIds, type DeleteOutcome
} from './store.js'
export {
  EnvelopeUploadSchema, PeerEnvelopeSchema, DeleteProofSchema, OwnerProofSchema, InboxItemSchema, X25519PubSchema, Ed25519PubSchema,
  MAX_CIPHERTEXT_BYTES, MAX_SEND_PLAINTEXT_BYTES, NONCE_BYTES, BOX_MAC_BYTES, SIGNED_TS_TOLERANCE_MS, PEER_FUTURE_TOLERANCE_MS,
  canonicalId, envelopeFromUpload, checkPeerEnvelope, presentInboxItem, deleteText, verifiedText, isoSeconds, base64DecodedLength,
  type Envelope, type InboxItem, type DeleteProof, type OwnerProof, type PeerEnvelopeCheck
} from './envelope.js'
export { generateSealKey, sealKeyFromEd25519, boxSeal, boxOpen, randomNonce, type SealKey } from './seal.js'
