/**
 * Typed errors shared by every subsystem. Each carries a stable `code`; the API maps codes to
 * HTTP statuses in one place (src/api/errors.ts), and tests assert codes rather than wording.
 */
export type ErrorCode =
  // request shape
  | 'BAD_REQUEST'
  | 'BODY_TOO_LARGE'
  | 'NOT_FOUND'
  | 'UNAUTHORIZED'
  | 'RATE_LIMITED'
  // HTTP connection: what the server's parser and timeouts refuse before any route runs
  | 'HTTP_REQUEST_TIMEOUT'
  | 'HTTP_HEADERS_TOO_LARGE'
  // transactions
  | 'TX_MALFORMED'
  | 'TX_BAD_SIGNATURE'
  | 'TX_BAD_TIMESTAMP'
  | 'TX_DUPLICATE'
  | 'TX_INSUFFICIENT_FUNDS'
  | 'TX_FEE_TOO_LOW'
  // a transaction the rules refuse: generic validation, then the rule-specific kinds
  | 'TX_INVALID'
  /** a field does not fit the type: a recipient or amount where none belongs, or none where one must be */
  | 'TX_BAD_FIELD'
  /** the state already holds what it would make (a duplicate, a second like, a request already pending) */
  | 'TX_CONFLICT'
  /** it names something the state does not hold (post, contract, method, contact request, device) */
  | 'TX_UNKNOWN_TARGET'
  /** the sender may not do this (not the author, not a genesis identity, a proposer-only type) */
  | 'TX_NOT_ALLOWED'
  /** this node could not decide it (its VM's guard tripped): left out of blocks, never a result */
  | 'TX_UNDECIDED'
  | 'TX_UNSUPPORTED_TYPE'
  | 'MEMPOOL_FULL'
  | 'NODE_BUSY'
  | 'TX_BLOCK_FULL'
  // identity registry (docs/protocol.md § 14)
  | 'IDENTITY_KEY_TAKEN'
  // contract deploys (docs/contracts.md): the module, its size or its ABI name refused
  | 'CONTRACT_REFUSED'
  | 'CONTRACT_DEPLOY_BUSY'
  | 'CONTRACT_DEPLOY_REFUSALS'
  // relay mailbox (docs/relay.md)
  | 'RELAY_FORBIDDEN'
  | 'RELAY_STALE_TS'
  | 'RELAY_MAILBOX_FULL'
  | 'RELAY_CLIENT_QUOTA'
  | 'RELAY_RECIPIENT_BUSY'
  | 'RELAY_READ_NONCE_LIMIT'
  | 'RELAY_STORAGE_FULL'
  | 'RELAY_FEE_REFUSED'
  | 'RELAY_UNAVAILABLE'
  // feed (docs/feed.md)
  | 'POST_GONE'
  | 'POST_TOO_LARGE'
  | 'FEED_QUOTA_EXCEEDED'
  | 'FEED_STALE_TS'
  | 'FEED_BAD_SIGNATURE'
  | 'FEED_INSUFFICIENT_FUNDS'
  | 'FEED_PENDING_LIMIT'
  | 'FEED_BAD_HOSTING_RELAY'
  // media scrubbing (docs/media.md)
  | 'MEDIA_UNSUPPORTED'
  | 'MEDIA_TYPE_MISMATCH'
  | 'MEDIA_INVALID'
  | 'MEDIA_BUSY'
  | 'MEDIA_NO_SIDECAR'
  | 'MEDIA_SIDECAR_FAILED'
  | 'MEDIA_SIDECAR_TIMEOUT'
  // versioning (docs/operating.md)
  | 'UPDATE_NO_SOURCE'
  | 'UPDATE_SOURCE_FAILED'
  | 'UPDATE_CHECKSUM_MISMATCH'
  | 'UPDATE_MAJOR_REFUSED'
  // a block that breaks the chain's rules (from a peer: never an HTTP answer)
  | 'BLOCK_INVALID'
  // a state snapshot that does not verify (docs/operating.md "Snapshots")
  | 'SNAPSHOT_INVALID'
  // the node's configuration (home, genesis, config.json, SVC_* environment, flags)
  | 'CONFIG_INVALID'
  // node faults
  | 'UNAVAILABLE'
  | 'INTERNAL'

export class KithError extends Error {
  readonly code: ErrorCode
  readonly details: Record<string, unknown> | undefined

  constructor (code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'KithError'
    this.code = code
    this.details = details
  }
}

export function isKithError (err: unknown): err is KithError {
  return err instanceof KithError
}
