export type P2PErrorCode =
  | 'P2P_BAD_KEY'
  | 'P2P_BAD_PEER'
  | 'P2P_TIMEOUT'
  | 'P2P_TOO_LARGE'
  | 'P2P_STREAM_ENDED'
  | 'P2P_REMOTE_ERROR'
  | 'P2P_STOPPED'
  | 'P2P_REQUEST_FAILED'

/** Every error `P2PHost` throws; `code` is stable, the message is for people. */
export class P2PError extends Error {
  readonly code: P2PErrorCode

  constructor (code: P2PErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'P2PError'
    this.code = code
  }
}

export function isP2PError (err: unknown): err is P2PError {
  return err instanceof P2PError
}
