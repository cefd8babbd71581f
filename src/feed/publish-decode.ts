/**
 * The part of a publish that needs neither the node's state nor its clock: JSON, the request's
 * schema, the attachment's base64, the raw hash and the author's signature. It is pure, so it runs
 * on a decode worker (publish-decoder.ts) for large bodies and inline for small ones, with the
 * same answers either way.
 */
import { createHash } from 'node:crypto'
import { fromCanonicalBase64, verify } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import { parseOrThrow } from '../validation/index.js'
import { PublishRequestSchema, type PublishRequest } from './schemas.js'

export interface DecodedPublish {
  /** the request without its attachment's base64 text (the bytes are in `attachment`) */
  req: Omit<PublishRequest, 'attachment_b64'>
  /** UTF-8 of req.content */
  content: Buffer
  attachment: { bytes: Buffer, mime: string } | undefined
  /** hex sha256 over the content bytes, then the raw attachment bytes */
  rawHash: string
  signatureValid: boolean
  /**
   * What is wrong with the attachment, if anything. Reported, not thrown: the service checks the
   * request's clock and author first, as it always has, so a request with several faults gets the
   * same error whether it was decoded here or on a worker.
   */
  attachmentError: string | undefined
}

/** Decodes a request body's bytes; throws BAD_REQUEST for a body that is not a valid request. */
export function decodePublishBytes (body: Uint8Array): DecodedPublish {
  if (body.length === 0) throw new KithError('BAD_REQUEST', 'request body: required: send a JSON object')
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'))
  } catch {
    throw new KithError('BAD_REQUEST', 'request body is not valid JSON')
  }
  return decodePublish(value)
}

/** Decodes a parsed JSON request; throws BAD_REQUEST when it does not match PublishRequest. */
export function decodePublish (value: unknown): DecodedPublish {
  const { attachment_b64: b64 = '', ...req } = parseOrThrow(PublishRequestSchema, value)
  let attachment: DecodedPublish['attachment']
  let attachmentError: string | undefined
  if (b64 !== '') {
    if (req.attachment_mime === undefined || req.attachment_mime === '') attachmentError = 'attachment_mime: required with attachment_b64'
    else {
      const bytes = fromCanonicalBase64(b64)
      if (bytes === undefined) attachmentError = 'attachment_b64: must be standard padded base64'
      else attachment = { bytes, mime: req.attachment_mime.toLowerCase() }
    }
  }
  const content = Buffer.from(req.content, 'utf8')
  // incremental, not crypto's sha256(...parts), which would first join a photo's megabytes
  const hash = createHash('sha256').update(content)
  if (attachment !== undefined) hash.update(attachment.bytes)
  const rawHash = hash.digest('hex')
  const text = `publish:${req.post_id}:${rawHash}:${req.ts}`
  const signatureValid = attachmentError === undefined && verify(Buffer.from(text, 'utf8'), Buffer.from(req.sig, 'base64'), Buffer.from(req.author, 'hex'))
  return { req, content, attachment, rawHash, signatureValid, attachmentError }
}
