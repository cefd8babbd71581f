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
  | 'TX_INVALID'
  | 'TX_UNSUPPORTED_TYPE'
  | 'MEMPOOL_FULL'
  | 'NODE_BUSY'
  | 'TX_BLOCK_FULL'
  // identity registry (docs/protocol.md § 14)
  | 'IDENTITY_KEY_TAKEN'
  // contract deploys (docs/contracts.md)
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
