/**
 * The feed from an app's side: a signed publish request (spec "Feed": the signature text
 * `publish:<post_id>:<raw_content_hash_hex>:<ts>`) and the transactions built from the publish
 * response. Pure helpers over the wire format; no node internals.
 */
import { createHash, randomBytes } from 'node:crypto'
import { sign, toBase64 } from '../crypto/index.js'
import { postFee, type Transaction } from '../chain/index.js'
import type { PublishRequest, PublishResponse } from '../feed/index.js'
import { buildTx, type Account } from './build.js'

/** The wire objects, as the node's schemas (which validate them and generate the OpenAPI document) infer them. */
export type { PublishRequest, PublishResponse }

export interface PublishInput {
  content: string
  /** default text/plain */
  contentType?: string
  attachment?: Uint8Array
  attachmentMime?: string
  replyTo?: string
  quoteOf?: string
  /** default: 16 random bytes, hex */
  postId?: string
  /** unix s; default now */
  ts?: number
}

export function newPostId (): string {
  return randomBytes(16).toString('hex')
}

/** sha256 over the content bytes then the raw (pre-scrub) attachment bytes, hex. */
export function rawContentHash (content: string, attachment?: Uint8Array): string {
  const hash = createHash('sha256').update(Buffer.from(content, 'utf8'))
  if (attachment !== undefined) hash.update(attachment)
  return hash.digest('hex')
}

export function publishText (postId: string, rawHashHex: string, ts: number): string {
  return `publish:${postId}:${rawHashHex}:${ts}`
}

export function publishRequest (author: Account, input: PublishInput): PublishRequest {
  const postId = input.postId ?? newPostId()
  const ts = input.ts ?? Math.floor(Date.now() / 1000)
  const text = publishText(postId, rawContentHash(input.content, input.attachment), ts)
  return {
    post_id: postId,
    author: author.pub,
    content: input.content,
    content_type: input.contentType ?? 'text/plain',
    ...(input.attachment !== undefined ? { attachment_b64: Buffer.from(input.attachment).toString('base64') } : {}),
    ...(input.attachmentMime !== undefined ? { attachment_mime: input.attachmentMime } : {}),
    ...(input.replyTo !== undefined ? { reply_to: input.replyTo } : {}),
    ...(input.quoteOf !== undefined ? { quote_of: input.quoteOf } : {}),
    sig: toBase64(sign(Buffer.from(text, 'utf8'), author.keyPair.secretKey)),
    ts
  }
}

/** The CREATE_POST for a publish response; the fee defaults to the estimate (the least allowed). */
export function createPostTx (author: Account, published: PublishResponse, opts: { replyTo?: string, quoteOf?: string, fee?: number, id?: string, time?: number } = {}): Transaction {
  return buildTx(author, {
    type: 'CREATE_POST',
    fee: opts.fee ?? published.estimated_fee_ut ?? postFee(published.size),
    id: opts.id,
    time: opts.time,
    payload: {
      post_id: published.post_id,
      content_hash: Buffer.from(published.content_hash, 'hex').toString('base64'),
      size: published.size,
      hosting_relay: published.hosting_relay,
      reply_to: opts.replyTo ?? '',
      quote_of: opts.quoteOf ?? ''
    }
  })
}

type PostAction = 'DELETE_POST' | 'LIKE_POST' | 'UNLIKE_POST'

export function postActionTx (from: Account, type: PostAction, postId: string, opts: { id?: string, time?: number } = {}): Transaction {
  return buildTx(from, { type, payload: { post_id: postId }, id: opts.id, time: opts.time })
}

export function followTx (from: Account, type: 'FOLLOW' | 'UNFOLLOW', target: string, opts: { id?: string, time?: number } = {}): Transaction {
  return buildTx(from, { type, to: target, id: opts.id, time: opts.time })
}
