import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { KithError } from '../../../src/errors/index.js'
import { MAX_CIPHERTEXT_BYTES, canonicalId } from '../../../src/relay/index.js'
import { checkPeerEnvelope, envelopeFromUpload, presentInboxItem, base64DecodedLength } from '../../../src/relay/envelope.js'
import { plainUpload, uploadBySchema } from '../../../src/relay/envelope.js'
import { BroadcastRequestSchema, plainBroadcastRequest } from '../../../src/api/routes/relay.js'
import { newClient, sealEnvelope } from './helpers.js'

function codeOf (fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (err) {
    if (err instanceof KithError) return `${err.code}: ${err.message}`
    throw err
  }
  return undefined
}

describe('canonical envelope id', () => {
  test('test vector: first 16 bytes of sha256(nonce ‖ ciphertext), lowercase hex', () => {
    // nonce = bytes 0x00..0x17, ciphertext = UTF-8 "kith relay test vector"; expected computed with Python's hashlib
    const nonce = Buffer.from('AAECAwQFBgcICQoLDA0ODxAREhMUFRYX', 'base64')
    const ciphertext = Buffer.from('a2l0aCByZWxheSB0ZXN0IHZlY3Rvcg==', 'base64')
    assert.equal(canonicalId(nonce, ciphertext), '21e0cbe1b371fc17ec0e7b1fbaf23ab9')
  })

  test('the server replaces the client id and sent_at, and lowercases keys', () => {
    const alice = newClient()
    const bob = newClient()
    const upload = sealEnvelope(alice, bob.pub.toUpperCase(), 'hi')
    const env = envelopeFromUpload(upload, 1_767_323_045)
    assert.equal(env.id, canonicalId(Buffer.from(upload.nonce as string, 'base64'), Buffer.from(upload.ciphertext as string, 'base64')))
    assert.notEqual(env.id, 'client-chosen')
    assert.equal(env.sent_at, 1_767_323_045)
    assert.equal(env.recipient_pub, bob.pub)
    assert.equal(env.sender_ed25519_pub, alice.edPub)
  })

  test('defaults: sender_ed25519_pub "", fee_ut 0, fee_sig null; id and sent_at optional', () => {
    const alice = newClient()
    const bare = sealEnvelope(alice, newClient().pub, 'x')
    for (const key of ['id', 'sent_at', 'sender_ed25519_pub', 'fee_ut', 'fee_sig']) delete bare[key]
    const env = envelopeFromUpload(bare, 5)
    assert.equal(env.sender_ed25519_pub, '')
    assert.equal(env.fee_ut, 0)
    assert.equal(env.fee_sig, null)
  })
})

describe('envelope validation', () => {
  const alice = newClient()
  const bob = newClient()
  const bad = (patch: Record<string, unknown>): string | undefined => codeOf(() => envelopeFromUpload({ ...sealEnvelope(alice, bob.pub, 'm'), ...patch }, 1))

  test('each malformed field is a 400 naming the field', () => {
    assert.match(bad({ id: '' }) ?? '', /^BAD_REQUEST: envelope\.id/)
    assert.match(bad({ sender_pub: 'abc' }) ?? '', /^BAD_REQUEST: envelope\.sender_pub/)
    assert.match(bad({ recipient_pub: 'zz'.repeat(32) }) ?? '', /^BAD_REQUEST: envelope\.recipient_pub/)
    assert.match(bad({ sender_ed25519_pub: 'ab' }) ?? '', /^BAD_REQUEST: envelope\.sender_ed25519_pub/)
    assert.match(bad({ fee_ut: -1 }) ?? '', /^BAD_REQUEST: envelope\.fee_ut/)
    assert.match(bad({ fee_ut: 1.5 }) ?? '', /^BAD_REQUEST: envelope\.fee_ut/)
    assert.match(bad({ fee_sig: 'not base64!' }) ?? '', /^BAD_REQUEST: envelope\.fee_sig/)
    assert.match(bad({ nonce: Buffer.alloc(23).toString('base64') }) ?? '', /^BAD_REQUEST: envelope\.nonce: .*24 bytes/)
    assert.match(bad({ nonce: 'AAAA' }) ?? '', /^BAD_REQUEST: envelope\.nonce/)
    assert.match(bad({ ciphertext: '' }) ?? '', /^BAD_REQUEST: envelope\.ciphertext/)
    assert.match(bad({ ciphertext: 'abc' }) ?? '', /^BAD_REQUEST: envelope\.ciphertext/)
    assert.match(bad({ sent_at: 'now' }) ?? '', /^BAD_REQUEST: envelope\.sent_at/)
    assert.match(codeOf(() => envelopeFromUpload('nope', 1)) ?? '', /^BAD_REQUEST/)
    assert.equal(bad({ fee_ut: 7, fee_sig: Buffer.alloc(64).toString('base64') }), undefined)
  })

  test(`a ciphertext over ${MAX_CIPHERTEXT_BYTES} bytes is 413 with the sizes; exactly the cap passes`, () => {
    assert.equal(bad({ ciphertext: Buffer.alloc(MAX_CIPHERTEXT_BYTES).toString('base64') }), undefined)
    const over = bad({ ciphertext: Buffer.alloc(MAX_CIPHERTEXT_BYTES + 1).toString('base64') })
    assert.equal(over, `BODY_TOO_LARGE: envelope ciphertext of ${MAX_CIPHERTEXT_BYTES + 1} bytes exceeds the limit of ${MAX_CIPHERTEXT_BYTES} bytes`)
  })

  test('base64DecodedLength matches Buffer', () => {
    for (let n = 0; n < 10; n++) assert.equal(base64DecodedLength(Buffer.alloc(n).toString('base64')), n)
  })

  test('inbox item shape of the spec', () => {
    const env = envelopeFromUpload(sealEnvelope(alice, bob.pub, 'hello'), 1_767_323_045)
    const item = presentInboxItem({ ...env, fee_sig: 'AAAA' })
    assert.deepEqual(Object.keys(item).sort(), ['ciphertext', 'fee_ut', 'id', 'nonce', 'recipient_pub', 'sender_ed25519_pub', 'sender_pub', 'sent_at', 'sent_at_human'])
    assert.equal(item.sent_at_human, '2026-01-02T03:04:05Z')
  })
})

describe('envelopes from peers', () => {
  test('must be canonical: id matching nonce and ciphertext, lowercase keys, integer sent_at', () => {
    const env = envelopeFromUpload(sealEnvelope(newClient(), newClient().pub, 'm'), 100)
    assert.deepEqual(checkPeerEnvelope(env), { ok: true, envelope: env })
    const forged = checkPeerEnvelope({ ...env, id: 'f'.repeat(32) })
    assert.equal(forged.ok, false)
    assert.match(forged.ok ? '' : forged.reason, /not the canonical id/)
    assert.equal(checkPeerEnvelope({ ...env, recipient_pub: env.recipient_pub.toUpperCase() }).ok, false)
    assert.equal(checkPeerEnvelope({ ...env, sent_at: undefined }).ok, false)
    assert.equal(checkPeerEnvelope({ ...env, ciphertext: Buffer.alloc(MAX_CIPHERTEXT_BYTES + 1).toString('base64') }).ok, false)
  })
})

describe('the plain-upload fast path agrees with EnvelopeUploadSchema', () => {
  test('on generated uploads, every envelope the fast path builds is the one the schema path builds', () => {
    const alice = newClient()
    const bob = newClient()
    const base = sealEnvelope(alice, bob.pub, 'agreement') as Record<string, unknown>
    const nonce = base.nonce as string
    // a non-canonical spelling of the same nonce bytes: the last character's unused bits set
    const lastChar = nonce.at(-1) as string
    const sloppyNonce = nonce.slice(0, -1) + (lastChar === 'A' ? 'B' : 'A')
    const variants: Record<string, unknown[]> = {
      id: [undefined, 'x', '', null, 7],
      sender_pub: [base.sender_pub, (base.sender_pub as string).toUpperCase(), 'ab', null],
      recipient_pub: [base.recipient_pub, (base.recipient_pub as string).toUpperCase(), '0'.repeat(63), 5],
      sender_ed25519_pub: [undefined, '', alice.edPub, alice.edPub.toUpperCase(), 'zz', null],
      fee_ut: [undefined, 0, 5, -1, 1.5, '5', 2 ** 53, Number.MAX_SAFE_INTEGER],
      fee_sig: [undefined, null, 'AAAA', 'AAA', 'AB==', '', 7],
      nonce: [nonce, sloppyNonce, nonce.slice(4), `${nonce}====`, 7],
      ciphertext: [base.ciphertext, '', 'AB==', 'A', 'AAAA', `${base.ciphertext as string} `, null],
      sent_at: [undefined, 1, 'now', null]
    }
    let seed = 7
    const pick = <T> (xs: T[]): T => { seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; return xs[seed % xs.length] }
    let fast = 0
    let schemaOnly = 0
    for (let i = 0; i < 3000; i++) {
      const upload: Record<string, unknown> = {}
      for (const [field, values] of Object.entries(variants)) {
        // mostly the valid value, so most uploads differ from it in one or two fields
        const value = seed % 3 === 0 ? pick(values) : (pick([0, 1, 2]) === 0 ? pick(values) : values[0])
        if (value !== undefined) upload[field] = value
      }
      // the route's hand check of the whole body agrees with its schema, members in the same order
      const body = { envelope: upload, extra: 1 }
      const route = plainBroadcastRequest(body)
      if (route !== undefined) {
        const parsed = BroadcastRequestSchema.safeParse(body)
        assert.ok(parsed.success, `body ${JSON.stringify(body)}`)
        assert.equal(JSON.stringify(route), JSON.stringify(parsed.data))
        assert.deepEqual(route, parsed.data)
      }
      const plain = plainUpload(upload, 1_767_323_045)
      assert.equal(route !== undefined, plain !== undefined, 'the route takes by hand what plainUpload takes')
      let bySchema: unknown
      try {
        bySchema = uploadBySchema(upload, 1_767_323_045)
      } catch (err) {
        assert.ok(err instanceof KithError)
        bySchema = undefined
      }
      if (plain !== undefined) {
        fast++
        assert.deepEqual(plain, bySchema, `upload ${JSON.stringify(upload)}`)
      } else if (bySchema !== undefined) {
        schemaOnly++
      }
    }
    // both kinds occur: the test is not vacuous
    assert.ok(fast > 300, `fast path taken ${fast} times`)
    assert.ok(schemaOnly > 30, `schema-only acceptances ${schemaOnly}`)
  })
})
