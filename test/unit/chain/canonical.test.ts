/**
 * Fixed test vectors for the wire format: canonical signing bytes, their sha256, the Ed25519
 * signature (deterministic), the tx hash; plus addresses, display amounts and canonical JSON.
 * The same vector is printed in docs/protocol.md; if one changes, both must.
 */
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { createPrivateKey, createPublicKey, verify as nodeVerify } from 'node:crypto'
import {
  ADDRESS_PREFIX, addressOf, canonicalJson, encodePayload, formatAmount, isPubkeyHex, pubkeyOfAddress, resolveAccount,
  signTx, signingBytes, txHash, verifyTxSignature, type Transaction
} from '../../../src/chain/index.js'
import { keyPairFromSeed, sha256Hex, toHex } from '../../../src/crypto/index.js'

/** Seed 0x01 0x02 ... 0x20 (the sender) and 0x21 ... 0x40 (the recipient). */
const SENDER_SEED = Uint8Array.from({ length: 32 }, (_, i) => i + 1)
const RECIPIENT_SEED = Uint8Array.from({ length: 32 }, (_, i) => i + 0x21)
const sender = keyPairFromSeed(SENDER_SEED)
const recipient = keyPairFromSeed(RECIPIENT_SEED)

const SENDER_PUB = '79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664'
const RECIPIENT_PUB = 'e7f162a10bec559afea195e4dce84b69568d5d2cb0963eb446c0685e2b17f2f0'

const VECTOR_UNSIGNED: Omit<Transaction, 'signature'> = {
  id: 'tx-1',
  type: 'TRANSFER',
  from: SENDER_PUB,
  to: RECIPIENT_PUB,
  amount: 1500000,
  fee: 1000,
  payload: 'e30=',
  timestamp: '2026-01-02T03:04:05Z'
}

const VECTOR_BYTES = '{"id":"tx-1","type":"TRANSFER","from":"79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664",' +
  '"to":"e7f162a10bec559afea195e4dce84b69568d5d2cb0963eb446c0685e2b17f2f0","amount":1500000,"fee":1000,' +
  '"payload":"e30=","timestamp":"2026-01-02T03:04:05Z"}'
const VECTOR_SHA256 = '295390a97fcb77ec7d3064aa253d480cfc59703d785f1e745f94acc43ec9e117'
const VECTOR_SIGNATURE = 'MtS8ztWCbjIo7d//EjuH3yWvp7PgfPdcW2F2O4ArmzobGJ53QjW5Xu8iXhJiTab9fXLW0rscVCyZ4t1H8xwJBg=='
const VECTOR_TX_HASH = 'c6d0c0e6c149f9a68ccff9669845a25f79184e9a3420523e3abe47516e256599'

/** Verifies with node:crypto (OpenSSL), independently of the libsodium code under test. */
function opensslVerify (message: Uint8Array, signatureB64: string, seed: Uint8Array): boolean {
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed)])
  const publicKey = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }))
  return nodeVerify(null, message, publicKey, Buffer.from(signatureB64, 'base64'))
}

describe('canonical signing bytes: fixed TRANSFER vector', () => {
  test('seeds give the fixed public keys', () => {
    assert.equal(toHex(sender.publicKey), SENDER_PUB)
    assert.equal(toHex(recipient.publicKey), RECIPIENT_PUB)
    const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(SENDER_SEED)])
    const spki = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' })
    assert.equal(spki.subarray(12).toString('hex'), SENDER_PUB)
  })

  test('encodePayload({}) is "e30=" (base64 of "{}")', () => {
    assert.equal(encodePayload({}), 'e30=')
    assert.equal(Buffer.from('e30=', 'base64').toString('utf8'), '{}')
  })

  test('exact bytes, length and sha256', () => {
    const bytes = signingBytes(VECTOR_UNSIGNED)
    assert.equal(bytes.toString('utf8'), VECTOR_BYTES)
    assert.equal(bytes.length, 257)
    assert.equal(sha256Hex(bytes), VECTOR_SHA256)
  })

  test('exact Ed25519 signature, verifiable by libsodium and by OpenSSL', () => {
    const tx = signTx(VECTOR_UNSIGNED, sender.secretKey)
    assert.equal(tx.signature, VECTOR_SIGNATURE)
    assert.equal(verifyTxSignature(tx), true)
    assert.equal(opensslVerify(Buffer.from(VECTOR_BYTES, 'utf8'), VECTOR_SIGNATURE, SENDER_SEED), true)
  })

  test('exact tx hash (covers memo and signature too)', () => {
    const tx: Transaction = { ...VECTOR_UNSIGNED, signature: VECTOR_SIGNATURE }
    assert.equal(txHash(tx).toString('hex'), VECTOR_TX_HASH)
    const expectedLeaf = sha256Hex(Buffer.from(JSON.stringify([
      'tx-1', 'TRANSFER', SENDER_PUB, RECIPIENT_PUB, 1500000, 1000, '', 'e30=', VECTOR_SIGNATURE, '2026-01-02T03:04:05Z'
    ]), 'utf8'))
    assert.equal(VECTOR_TX_HASH, expectedLeaf)
    assert.notEqual(txHash({ ...tx, memo: 'x' }).toString('hex'), VECTOR_TX_HASH)
  })

  test('member order of the input object, memo and signature do not affect the bytes', () => {
    const shuffled = {
      timestamp: '2026-01-02T03:04:05Z',
      signature: VECTOR_SIGNATURE,
      memo: 'ignored',
      payload: 'e30=',
      fee: 1000,
      amount: 1500000,
      to: RECIPIENT_PUB,
      from: SENDER_PUB,
      type: 'TRANSFER' as const,
      id: 'tx-1'
    }
    assert.equal(signingBytes(shuffled).toString('utf8'), VECTOR_BYTES)
  })
})

describe('canonical signing bytes: non-ASCII', () => {
  const MEMO_PAYLOAD = encodePayload({ memo: 'café ☕' })
  const unsigned: Omit<Transaction, 'signature'> = { ...VECTOR_UNSIGNED, id: 'tx-2', payload: MEMO_PAYLOAD, memo: 'naïve 日本' }
  const EXPECTED_BYTES = '{"id":"tx-2","type":"TRANSFER","from":"79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664",' +
    '"to":"e7f162a10bec559afea195e4dce84b69568d5d2cb0963eb446c0685e2b17f2f0","amount":1500000,"fee":1000,' +
    '"payload":"eyJtZW1vIjoiY2Fmw6kg4piVIn0=","timestamp":"2026-01-02T03:04:05Z"}'
  const EXPECTED_SIGNATURE = 'x9oCE0DS9cyx6JhDOUup+sGkxykAsUYSeGCJx4Y8Fv08dWFbx3mqQW0JuoZfQSfdTxa6HCcyZNv9EKA4afSeCQ=='

  test('the payload carries raw UTF-8 (no \\u escapes) inside its base64', () => {
    assert.equal(MEMO_PAYLOAD, 'eyJtZW1vIjoiY2Fmw6kg4piVIn0=')
    // {"memo":"café ☕"}: é is c3 a9, ☕ is e2 98 95
    assert.equal(Buffer.from(MEMO_PAYLOAD, 'base64').toString('hex'), '7b226d656d6f223a22636166c3a920e29895227d')
  })

  test('exact bytes, sha256 and signature', () => {
    const bytes = signingBytes(unsigned)
    assert.equal(bytes.toString('utf8'), EXPECTED_BYTES)
    assert.equal(sha256Hex(bytes), '20fd810a96414ac7e3c76038d9ce05f7e7bc6995708855d77daf72a59ffdce74')
    const tx = signTx(unsigned, sender.secretKey)
    assert.equal(tx.signature, EXPECTED_SIGNATURE)
    assert.equal(tx.memo, 'naïve 日本')
    assert.equal(opensslVerify(bytes, EXPECTED_SIGNATURE, SENDER_SEED), true)
  })

  test('string members are serialized as raw UTF-8, not \\u escapes', () => {
    // Not a schema-valid id (ids are ASCII); this pins how signingBytes itself encodes text.
    const bytes = signingBytes({ ...VECTOR_UNSIGNED, id: 'tx-é' })
    assert.equal(bytes.subarray(0, 13).toString('hex'), '7b226964223a2274782dc3a922')
    assert.equal(bytes.includes(Buffer.from('\\u00e9')), false)
    assert.equal(bytes.length, 258)
  })

  test('memo is not signed: changing it keeps the signature valid', () => {
    const tx = signTx(unsigned, sender.secretKey)
    assert.equal(verifyTxSignature({ ...tx, memo: 'something else ✓' }), true)
    const withoutMemo: Transaction = { ...tx }
    delete withoutMemo.memo
    assert.equal(verifyTxSignature(withoutMemo), true)
  })

  const tampered: Array<[string, Partial<Transaction>]> = [
    ['id', { id: 'tx-3' }],
    ['type', { type: 'BLOCK_REWARD' }],
    ['from', { from: RECIPIENT_PUB }],
    ['to', { to: SENDER_PUB }],
    ['amount', { amount: 1500001 }],
    ['fee', { fee: 1001 }],
    ['payload', { payload: encodePayload({ memo: 'cafe ☕' }) }],
    ['timestamp', { timestamp: '2026-01-02T03:04:06Z' }]
  ]
  for (const [field, change] of tampered) {
    test(`changing signed field ${field} breaks the signature`, () => {
      const tx = signTx(unsigned, sender.secretKey)
      assert.equal(verifyTxSignature(tx), true)
      assert.equal(verifyTxSignature({ ...tx, ...change }), false)
    })
  }
})

describe('addresses', () => {
  const SENDER_ADDRESS = 'kith10x64vt50ue20jsrckyfw32vt57gplpf6u62ma4lquwgshtgyjejqpz6mue'
  const RECIPIENT_ADDRESS = 'kith1ulck9ggta32e4l4pjhjde6ztd9tg6hfvkztradzxcp59u2ch7tcqz8mpka'

  test('fixed vectors: bech32m, prefix "kith", 63 characters', () => {
    assert.equal(ADDRESS_PREFIX, 'kith')
    assert.equal(addressOf(SENDER_PUB), SENDER_ADDRESS)
    assert.equal(addressOf(RECIPIENT_PUB), RECIPIENT_ADDRESS)
    assert.equal(SENDER_ADDRESS.length, 63)
  })

  test('round-trip address -> pubkey', () => {
    assert.equal(pubkeyOfAddress(SENDER_ADDRESS), SENDER_PUB)
    assert.equal(pubkeyOfAddress(RECIPIENT_ADDRESS), RECIPIENT_PUB)
    for (let i = 0; i < 16; i++) {
      const pub = toHex(keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, j) => (i * 7 + j) & 0xff)).publicKey)
      assert.equal(pubkeyOfAddress(addressOf(pub)), pub)
    }
  })

  test('checksum catches a changed character', () => {
    const last = SENDER_ADDRESS.at(-1) === 'q' ? 'p' : 'q'
    assert.equal(pubkeyOfAddress(SENDER_ADDRESS.slice(0, -1) + last), undefined)
    const mid = SENDER_ADDRESS.slice(0, 20) + (SENDER_ADDRESS[20] === 'q' ? 'p' : 'q') + SENDER_ADDRESS.slice(21)
    assert.equal(pubkeyOfAddress(mid), undefined)
  })

  test('rejects another prefix, bech32 (not m), a wrong length and garbage', () => {
    // same 32 bytes of 0x01 under different encodings
    assert.equal(pubkeyOfAddress('kash1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs0pk4ts'), undefined)
    assert.equal(pubkeyOfAddress('kith1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs4favdh'), undefined)
    // bech32m over 31 bytes
    assert.equal(pubkeyOfAddress('kith1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqytvtjks'), undefined)
    assert.equal(pubkeyOfAddress(''), undefined)
    assert.equal(pubkeyOfAddress('kith1'), undefined)
    assert.equal(pubkeyOfAddress(SENDER_PUB), undefined)
  })

  test('resolveAccount accepts a pubkey in any case or an address, and returns lowercase hex', () => {
    assert.equal(resolveAccount(SENDER_PUB), SENDER_PUB)
    assert.equal(resolveAccount(SENDER_PUB.toUpperCase()), SENDER_PUB)
    assert.equal(resolveAccount(SENDER_ADDRESS), SENDER_PUB)
    assert.equal(resolveAccount('not-an-account'), undefined)
    assert.equal(resolveAccount(SENDER_PUB.slice(1)), undefined)
  })

  test('isPubkeyHex wants exactly 64 lowercase hex characters', () => {
    assert.equal(isPubkeyHex(SENDER_PUB), true)
    assert.equal(isPubkeyHex(SENDER_PUB.toUpperCase()), false)
    assert.equal(isPubkeyHex(SENDER_PUB + '0'), false)
    assert.equal(isPubkeyHex(SENDER_PUB.slice(2)), false)
    assert.equal(isPubkeyHex('g'.repeat(64)), false)
  })
})

describe('formatAmount', () => {
  const rows: Array<[number, string]> = [
    [0, '0 T'],
    [1, '0.000001 T'],
    [10, '0.00001 T'],
    [1000, '0.001 T'],
    [999999, '0.999999 T'],
    [1000000, '1 T'],
    [1500000, '1.5 T'],
    [1234567, '1.234567 T'],
    [25000000, '25 T'],
    [Number.MAX_SAFE_INTEGER, '9007199254.740991 T']
  ]
  for (const [ut, display] of rows) {
    test(`${ut} µT -> "${display}"`, () => {
      assert.equal(formatAmount(ut), display)
    })
  }
})

describe('canonicalJson', () => {
  test('sorts members recursively and drops whitespace', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, 1, 2], c: 'x' } }), '{"a":{"c":"x","d":[3,1,2]},"b":1}')
  })

  test('sorts by UTF-16 code unit (uppercase and "_" before lowercase)', () => {
    assert.equal(canonicalJson({ b: 1, _: 2, B: 3, a: 4, aa: 5 }), '{"B":3,"_":2,"a":4,"aa":5,"b":1}')
  })

  test('keeps array order, drops undefined members, keeps null', () => {
    assert.equal(canonicalJson({ z: [{ y: 1, x: 2 }, 'a'], u: undefined, n: null }), '{"n":null,"z":[{"x":2,"y":1},"a"]}')
  })

  test('same value, different insertion order: same text', () => {
    const a = { chain_id: 'c', params: { max_block_txs: 5, block_reward_ut: 0 }, alloc: [] }
    const b = { alloc: [], params: { block_reward_ut: 0, max_block_txs: 5 }, chain_id: 'c' }
    assert.equal(canonicalJson(a), canonicalJson(b))
  })

  test('non-ASCII stays raw UTF-8; control characters and quotes are escaped as JSON.stringify does', () => {
    assert.equal(canonicalJson({ s: 'é☕"\n' }), '{"s":"é☕\\"\\n"}')
    assert.equal(Buffer.from(canonicalJson('é'), 'utf8').toString('hex'), '22c3a922')
  })

  test('scalars', () => {
    assert.equal(canonicalJson(0), '0')
    assert.equal(canonicalJson(9007199254740991), '9007199254740991')
    assert.equal(canonicalJson(true), 'true')
    assert.equal(canonicalJson(null), 'null')
    assert.equal(canonicalJson('a'), '"a"')
  })

  test('rejects non-finite numbers', () => {
    assert.throws(() => canonicalJson({ x: Number.NaN }), TypeError)
    assert.throws(() => canonicalJson([Number.POSITIVE_INFINITY]), TypeError)
  })
})
