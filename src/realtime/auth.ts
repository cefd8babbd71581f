/**
 * The Ed25519 nonce handshake of a WebSocket, without I/O. The node sends a fresh 32-byte nonce
 * in `hello`; the client answers `auth` with its key and a signature over
 * `kith-ws-auth:<nonce>:<ed25519_pub>`; the connection then acts for that key. A nonce serves
 * once and only on the connection it was sent to, so a captured signature proves nothing
 * elsewhere or later.
 */
import { randomBytes } from 'node:crypto'
import { fromBase64, verify } from '../crypto/index.js'
import { KithError } from '../errors/index.js'

export function authText (nonce: string, ed25519Pub: string): string {
  return `kith-ws-auth:${nonce}:${ed25519Pub}`
}

export function newNonce (): string {
  return randomBytes(32).toString('hex')
}

/** One connection's side of the handshake. */
export class NonceHandshake {
  private nonce: string | undefined
  private proven: string | undefined

  constructor (nonce: string = newNonce()) {
    this.nonce = nonce
  }

  /** The nonce sent in `hello`; undefined once used. */
  get pendingNonce (): string | undefined {
    return this.nonce
  }

  /** The proven Ed25519 key, once `auth` succeeded. */
  get identity (): string | undefined {
    return this.proven
  }

  /**
   * Checks an `auth` message; returns the proven key or throws: UNAUTHORIZED for a nonce this
   * connection did not issue or already used, for a second identity, or for a bad signature.
   */
  prove (nonce: string, ed25519Pub: string, sig: string): string {
    const given = nonce.toLowerCase()
    if (this.proven !== undefined) throw new KithError('UNAUTHORIZED', `this connection already proved ${this.proven}; open another connection for another key`)
    if (this.nonce === undefined || given !== this.nonce) {
      throw new KithError('UNAUTHORIZED', `nonce ${given} was not issued to this connection or was already used`)
    }
    const signature = fromBase64(sig)
    if (signature === undefined || signature.length !== 64 || !verify(Buffer.from(authText(given, ed25519Pub), 'utf8'), signature, Buffer.from(ed25519Pub, 'hex'))) {
      // the nonce stays valid: forging is no easier for another try, and an honest client may retry with the right key
      throw new KithError('UNAUTHORIZED', `sig is not a valid signature by ${ed25519Pub} over kith-ws-auth:<nonce>:<ed25519_pub>`)
    }
    this.nonce = undefined
    this.proven = ed25519Pub
    return ed25519Pub
  }
}
