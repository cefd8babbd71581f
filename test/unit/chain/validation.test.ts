/**
 * One row per validation rule: the wire schema (TransactionSchema + parseOrThrow, as the API
 * runs it) and the submission checks (checkSubmission). Each row asserts the KithError code.
 */
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import {
  MAX_TX_ID_LENGTH, TX_RULES, TX_TYPES, TransactionSchema, checkStateless, checkSubmission, encodePayload, formatTimestamp,
  plainTransaction, signTx, type Transaction
} from '../../../src/chain/index.js'
import { keyPairFromSeed, toHex } from '../../../src/crypto/index.js'
import type { ErrorCode } from '../../../src/errors/index.js'
import { parseOrThrow } from '../../../src/validation/index.js'
import { assertKithError } from '../../helpers/fixtures.js'

const alice = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 1))
const bob = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 0x21))
const ALICE = toHex(alice.publicKey)
const BOB = toHex(bob.publicKey)

/** The node clock in these tests: 2026-01-02T03:04:05Z. */
const NOW = Date.parse('2026-01-02T03:04:05Z')
const MINUTE = 60_000

function makeTx (over: Partial<Omit<Transaction, 'signature'>> = {}, key: Uint8Array = alice.secretKey): Transaction {
  return signTx({
    id: 'tx-1',
    type: 'TRANSFER',
    from: ALICE,
    to: BOB,
    amount: 1500000,
    fee: 1000,
    payload: encodePayload({}),
    timestamp: formatTimestamp(NOW),
    ...over
  }, key)
}

function parseTx (raw: unknown): Transaction {
  return parseOrThrow(TransactionSchema, raw, 'TX_MALFORMED')
}

const valid: Array<[string, Record<string, unknown>]> = [
  ['id of 128 characters', { id: 'a'.repeat(MAX_TX_ID_LENGTH) }],
  ['id with . _ : -', { id: 'Tx.1_a:b-c' }],
  ['hash-like id', { id: 'f'.repeat(64) }],
  ['to empty string', { to: '' }],
  ['amount 0', { amount: 0 }],
  ['amount 2^53-1', { amount: Number.MAX_SAFE_INTEGER }],
  ['empty payload', { payload: '' }],
  ['memo of 256 code points (512 UTF-16 units)', { memo: '😀'.repeat(256) }],
  ['leap-year date', { timestamp: '2028-02-29T23:59:59Z' }]
]
for (const [name, change] of valid) {
  test(`accepts ${name}`, () => {
    const raw = { ...makeTx(), ...change }
    assert.deepEqual(parseTx(raw), raw)
  })
}

/** [rule, change to a valid tx, field named at the start of the message] */
const malformed: Array<[string, Record<string, unknown>, string]> = [
  ['id empty', { id: '' }, 'id'],
  ['id with a space', { id: 'tx 1' }, 'id'],
  ['id with a slash', { id: 'tx/1' }, 'id'],
  ['id starting with "-"', { id: '-tx1' }, 'id'],
  ['id with non-ASCII', { id: 'tx-é' }, 'id'],
  ['id longer than 128', { id: 'a'.repeat(MAX_TX_ID_LENGTH + 1) }, 'id'],
  ['id not a string', { id: 1 }, 'id'],
  ['type unknown', { type: 'MINT' }, 'type'],
  ['type lowercase', { type: 'transfer' }, 'type'],
  ['from uppercase hex', { from: ALICE.toUpperCase() }, 'from'],
  ['from non-hex', { from: 'z'.repeat(64) }, 'from'],
  ['from 63 characters', { from: ALICE.slice(1) }, 'from'],
  ['from as an address', { from: 'kith10x64vt50ue20jsrckyfw32vt57gplpf6u62ma4lquwgshtgyjejqpz6mue' }, 'from'],
  ['to not a pubkey', { to: 'bob' }, 'to'],
  ['to uppercase hex', { to: BOB.toUpperCase() }, 'to'],
  ['to null', { to: null }, 'to'],
  ['amount negative', { amount: -1 }, 'amount'],
  ['amount not an integer', { amount: 1.5 }, 'amount'],
  ['amount above 2^53-1', { amount: Number.MAX_SAFE_INTEGER + 1 }, 'amount'],
  ['amount as a string', { amount: '1500000' }, 'amount'],
  ['fee negative', { fee: -1000 }, 'fee'],
  ['fee not an integer', { fee: 1000.5 }, 'fee'],
  ['payload without padding', { payload: 'e30' }, 'payload'],
  ['payload with invalid characters', { payload: 'e3$=' }, 'payload'],
  ['payload URL-safe alphabet', { payload: 'ab-_' }, 'payload'],
  ['payload with a newline', { payload: 'e30=\n' }, 'payload'],
  ['signature too short', { signature: 'AAAA' }, 'signature'],
  ['signature 87 characters', { signature: 'A'.repeat(87) }, 'signature'],
  ['signature of 88 characters that is not base64', { signature: '!'.repeat(88) }, 'signature'],
  ['signature hex instead of base64', { signature: 'ab'.repeat(64) }, 'signature'],
  ['memo longer than 256 code points', { memo: 'm'.repeat(257) }, 'memo'],
  ['memo not a string', { memo: 5 }, 'memo'],
  ['timestamp with milliseconds', { timestamp: '2026-01-01T00:00:00.000Z' }, 'timestamp'],
  ['timestamp with a space', { timestamp: '2026-01-01 00:00:00Z' }, 'timestamp'],
  ['timestamp February 30', { timestamp: '2026-02-30T00:00:00Z' }, 'timestamp'],
  ['timestamp 24:00:00', { timestamp: '2026-01-01T24:00:00Z' }, 'timestamp'],
  ['timestamp leap second', { timestamp: '2026-12-31T23:59:60Z' }, 'timestamp'],
  ['timestamp month 13', { timestamp: '2026-13-01T00:00:00Z' }, 'timestamp'],
  ['timestamp with an offset', { timestamp: '2026-01-01T00:00:00+00:00' }, 'timestamp'],
  ['timestamp lowercase z', { timestamp: '2026-01-01T00:00:00z' }, 'timestamp'],
  ['timestamp without seconds', { timestamp: '2026-01-01T00:00Z' }, 'timestamp'],
  ['timestamp date only', { timestamp: '2026-01-01' }, 'timestamp'],
  ['timestamp as unix seconds', { timestamp: 1767225600 }, 'timestamp']
]

describe('TransactionSchema via parseOrThrow', () => {
  test('a well-formed transaction parses to the same value', () => {
    const tx = makeTx({ memo: 'hi' })
    assert.deepEqual(parseTx(tx), tx)
  })

  test('unknown members are stripped', () => {
    const parsed = parseTx({ ...makeTx(), extra: 1 })
    assert.equal(Object.hasOwn(parsed, 'extra'), false)
  })

  for (const [rule, change, field] of malformed) {
    test(`rejects ${rule} -> TX_MALFORMED`, () => {
      assertKithError(() => parseTx({ ...makeTx(), ...change }), 'TX_MALFORMED', `${field}: `)
    })
  }

  for (const field of ['id', 'type', 'from', 'to', 'amount', 'fee', 'payload', 'signature', 'timestamp']) {
    test(`rejects a missing ${field} -> TX_MALFORMED`, () => {
      const raw: Record<string, unknown> = { ...makeTx() }
      delete raw[field]
      assertKithError(() => parseTx(raw), 'TX_MALFORMED', `${field}: `)
    })
  }

  test('rejects a body that is not an object', () => {
    assertKithError(() => parseTx([]), 'TX_MALFORMED')
    assertKithError(() => parseTx('tx'), 'TX_MALFORMED')
    assertKithError(() => parseTx(null), 'TX_MALFORMED')
  })

  test('parseOrThrow uses the code it is given and prefixes the label', () => {
    assertKithError(() => parseOrThrow(TransactionSchema, { ...makeTx(), fee: -1 }, 'BAD_REQUEST', 'body'), 'BAD_REQUEST', 'body.fee: ')
  })
})

describe('plainTransaction: the hand check agrees with TransactionSchema', () => {
  /** The schema's result, or undefined where it refuses. */
  const bySchema = (raw: unknown): Transaction | undefined => {
    const parsed = TransactionSchema.safeParse(raw)
    return parsed.success ? parsed.data : undefined
  }
  const agrees = (raw: unknown, label: string): 'plain' | 'schema-only' | 'neither' => {
    const plain = plainTransaction(raw)
    const schema = bySchema(raw)
    if (plain === undefined) return schema === undefined ? 'neither' : 'schema-only'
    assert.deepEqual(plain, schema, label)
    // members in the same order: what is gossiped and stored is the same text either way
    assert.equal(JSON.stringify(plain), JSON.stringify(schema), label)
    return 'plain'
  }

  test('on every row above, and a transaction with a memo: what it accepts is what the schema gives', () => {
    for (const [rule, change] of valid) assert.equal(agrees({ ...makeTx(), ...change }, rule), 'plain', rule)
    for (const [rule, change] of malformed) assert.equal(agrees({ ...makeTx(), ...change }, rule), 'neither', rule)
    assert.equal(agrees({ ...makeTx({ memo: 'é'.repeat(256) }), extra: 1 }, 'memo of 256 code points, an unknown member'), 'plain')
    assert.equal(agrees({ ...makeTx(), memo: '😀'.repeat(256) }, 'memo of 256 code points in 512 UTF-16 units'), 'plain')
    assert.equal(agrees({ ...makeTx(), memo: undefined }, 'memo present as undefined'), 'schema-only')
  })

  test('on generated transactions, every one it accepts the schema accepts alike', () => {
    const base = makeTx({ memo: 'hi' }) as unknown as Record<string, unknown>
    const variants: Record<string, unknown[]> = {
      id: [base.id, '', 'a'.repeat(128), 'a'.repeat(129), '-x', 'x y', 7, null],
      type: [base.type, 'HEARTBEAT', 'transfer', 'NOPE', 1],
      from: [base.from, BOB, ALICE.toUpperCase(), ALICE.slice(2), ''],
      to: [base.to, '', ALICE, 'bob', null],
      amount: [base.amount, 0, -0, -1, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER, '5', Number.NaN],
      fee: [base.fee, 0, -1, 1e21, 1000.5, null],
      memo: [undefined, 'hi', '', 'm'.repeat(256), 'm'.repeat(257), 7],
      payload: [base.payload, '', 'e30', 'e30==', 'AAAA', 'A'.repeat(256 * 1024 + 4), null],
      signature: [base.signature, 'A'.repeat(88), `${(base.signature as string).slice(0, 85)}B==`, 'AAAA', 5],
      timestamp: [base.timestamp, '2028-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2000-02-29T12:00:00Z', '2026-04-31T00:00:00Z', '0000-01-01T00:00:00Z', '2026-01-01T00:00:60Z', 0],
      extra: [undefined, 1]
    }
    let seed = 11
    // the generator's high bits: its low ones repeat with a short period
    const pick = <T> (xs: T[]): T => { seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; return xs[(seed >>> 12) % xs.length] as T }
    const seen = { plain: 0, 'schema-only': 0, neither: 0 }
    for (let i = 0; i < 4000; i++) {
      const raw: Record<string, unknown> = {}
      for (const [field, values] of Object.entries(variants)) {
        // mostly the valid value, so most transactions differ from it in one or two members
        const value = pick([0, 1, 2, 3, 4, 5, 6, 7]) === 0 ? pick(values) : values[0]
        if (value !== undefined) raw[field] = value
      }
      seen[agrees(raw, JSON.stringify(raw).slice(0, 300))]++
    }
    // both kinds occur: the test is not vacuous
    assert.ok(seen.plain > 400, `accepted by the hand check ${seen.plain} times`)
    assert.ok(seen.neither > 400, `refused by both ${seen.neither} times`)
  })

  test('timestamps: a real UTC second, as the calendar counts it (checked against Date over four centuries of edge days)', () => {
    const byDate = (value: string): boolean => {
      const ms = Date.parse(value)
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value) && Number.isFinite(ms) && new Date(ms).toISOString() === `${value.slice(0, 19)}.000Z`
    }
    const pad = (n: number, w = 2): string => String(n).padStart(w, '0')
    let checked = 0
    for (const year of [0, 4, 100, 1600, 1900, 1970, 2000, 2024, 2026, 2100, 2400, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (const day of [0, 1, 28, 29, 30, 31, 32]) {
          for (const time of ['00:00:00', '23:59:59', '24:00:00', '12:60:00', '12:00:60']) {
            const value = `${pad(year, 4)}-${pad(month)}-${pad(day)}T${time}Z`
            assert.equal(TransactionSchema.shape.timestamp.safeParse(value).success, byDate(value), value)
            checked++
          }
        }
      }
    }
    assert.equal(checked, 12 * 14 * 7 * 5)
  })
})

describe('checkSubmission', () => {
  test('a valid TRANSFER passes and carries its decoded payload', () => {
    const checked = checkSubmission(makeTx({ payload: encodePayload({ memo: 'coffee' }) }), NOW)
    assert.deepEqual(checked.payload, { memo: 'coffee' })
    assert.equal(checked.tx.id, 'tx-1')
    assert.equal(checked.rule, TX_RULES.TRANSFER)
  })

  const timeRows: Array<[string, number, ErrorCode | undefined]> = [
    ['exactly 5 minutes ahead', NOW + 5 * MINUTE, undefined],
    ['exactly 5 minutes behind', NOW - 5 * MINUTE, undefined],
    ['5 minutes and 1 second ahead', NOW + 5 * MINUTE + 1000, 'TX_BAD_TIMESTAMP'],
    ['5 minutes and 1 second behind', NOW - 5 * MINUTE - 1000, 'TX_BAD_TIMESTAMP'],
    ['one hour ahead', NOW + 60 * MINUTE, 'TX_BAD_TIMESTAMP'],
    ['one day behind', NOW - 24 * 60 * MINUTE, 'TX_BAD_TIMESTAMP']
  ]
  for (const [name, time, code] of timeRows) {
    test(`timestamp ${name} -> ${code ?? 'accepted'}`, () => {
      const tx = makeTx({ timestamp: formatTimestamp(time) })
      if (code === undefined) assert.equal(checkSubmission(tx, NOW).tx, tx)
      else assertKithError(() => checkSubmission(tx, NOW), code, 'timestamp')
    })
  }

  test('the window is measured from the node clock at millisecond precision', () => {
    const tx = makeTx({ timestamp: formatTimestamp(NOW) })
    checkSubmission(tx, NOW + 5 * MINUTE)
    assertKithError(() => checkSubmission(tx, NOW + 5 * MINUTE + 1), 'TX_BAD_TIMESTAMP', 'timestamp')
  })

  test('a signature over other bytes -> TX_BAD_SIGNATURE', () => {
    const tx = { ...makeTx(), signature: makeTx({ id: 'tx-2' }).signature }
    assertKithError(() => checkSubmission(tx, NOW), 'TX_BAD_SIGNATURE', 'signature')
  })

  test('a signature by another key -> TX_BAD_SIGNATURE', () => {
    assertKithError(() => checkSubmission(makeTx({}, bob.secretKey), NOW), 'TX_BAD_SIGNATURE', 'signature')
  })

  test('a flipped bit in the signature -> TX_BAD_SIGNATURE', () => {
    const tx = makeTx()
    const sig = Buffer.from(tx.signature, 'base64')
    sig[10] = (sig[10] ?? 0) ^ 1
    assertKithError(() => checkSubmission({ ...tx, signature: sig.toString('base64') }, NOW), 'TX_BAD_SIGNATURE', 'signature')
  })

  test('a changed signed field after signing -> TX_BAD_SIGNATURE', () => {
    assertKithError(() => checkSubmission({ ...makeTx(), amount: 1 }, NOW), 'TX_BAD_SIGNATURE', 'signature')
  })

  test('fee 999 -> TX_FEE_TOO_LOW; fee 1000 is the minimum', () => {
    assertKithError(() => checkSubmission(makeTx({ fee: 999 }), NOW), 'TX_FEE_TOO_LOW')
    assertKithError(() => checkSubmission(makeTx({ fee: 0 }), NOW), 'TX_FEE_TOO_LOW')
    checkSubmission(makeTx({ fee: 1000 }), NOW)
  })

  test('TRANSFER without `to` -> TX_INVALID', () => {
    assertKithError(() => checkSubmission(makeTx({ to: '' }), NOW), 'TX_BAD_FIELD')
  })

  test('TRANSFER with amount 0 -> TX_INVALID', () => {
    assertKithError(() => checkSubmission(makeTx({ amount: 0 }), NOW), 'TX_BAD_FIELD')
  })

  test('TRANSFER to oneself is allowed', () => {
    checkSubmission(makeTx({ to: ALICE }), NOW)
  })

  test('BLOCK_REWARD submitted by a client -> TX_INVALID', () => {
    const tx = makeTx({ type: 'BLOCK_REWARD', id: 'reward-1', to: '', fee: 0, amount: 0 })
    assertKithError(() => checkSubmission(tx, NOW), 'TX_NOT_ALLOWED', 'BLOCK_REWARD')
    // the same transaction is statelessly fine: only submission refuses it
    assert.equal(checkStateless(tx).tx, tx)
  })

  test('a client id in the reserved reward-<height> space -> TX_INVALID', () => {
    assertKithError(() => checkSubmission(makeTx({ id: 'reward-5' }), NOW), 'TX_NOT_ALLOWED', 'reserved')
  })

  test('BLOCK_REWARD with a fee -> TX_INVALID (stateless check)', () => {
    assertKithError(() => checkStateless(makeTx({ type: 'BLOCK_REWARD', to: '', fee: 1000, amount: 0 })), 'BLOCK_INVALID')
  })

  test('every transaction type of the spec has a rule', () => {
    assert.deepEqual(TX_TYPES.filter((type) => TX_RULES[type] === undefined), [])
  })

  test('CALL_CONTRACT: a malformed contract id, a missing gas limit, args that are not an array -> 400 codes naming the member', () => {
    const call = (payload: unknown): ReturnType<typeof makeTx> => makeTx({ type: 'CALL_CONTRACT', to: '', amount: 0, payload: encodePayload(payload) })
    assertKithError(() => checkSubmission(call({ contract_id: 'c1', method: 'm', args_json: '', gas_limit: 1000 }), NOW), 'TX_MALFORMED', 'contract_id')
    assertKithError(() => checkSubmission(call({ contract_id: 'a'.repeat(40), method: 'm', args_json: '' }), NOW), 'TX_MALFORMED', 'gas_limit')
    assertKithError(() => checkSubmission(call({ contract_id: 'a'.repeat(40), method: 'm', args_json: '{"a":1}', gas_limit: 1000 }), NOW), 'TX_INVALID', 'JSON array')
    assertKithError(() => checkSubmission(call({ contract_id: 'a'.repeat(40), method: 'm', args_json: '[1', gas_limit: 1000 }), NOW), 'TX_INVALID', 'does not parse')
    assert.equal(checkSubmission(call({ contract_id: 'a'.repeat(40), method: 'register', args_json: '["alice_01"]', gas_limit: 1000 }), NOW).tx.type, 'CALL_CONTRACT')
  })

  test('DEPLOY_CONTRACT: the fee floor grows with the code, and code past the cap is refused', () => {
    const deploy = (bytes: number, fee: number): ReturnType<typeof makeTx> => makeTx({ type: 'DEPLOY_CONTRACT', to: '', amount: 0, fee, payload: encodePayload({ name: 'c', code_b64: Buffer.alloc(bytes).toString('base64') }) })
    assertKithError(() => checkSubmission(deploy(100, 1099), NOW), 'TX_FEE_TOO_LOW', '1100')
    assert.equal(checkSubmission(deploy(100, 1100), NOW).tx.fee, 1100)
    assertKithError(() => checkSubmission(deploy(128 * 1024 + 1, 10_000_000), NOW), 'CONTRACT_REFUSED', 'more than the 131072')
  })

  const badPayloads: Array<[string, string]> = [
    ['a JSON array', '[]'],
    ['a JSON string', '"memo"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['not JSON', 'memo: hi'],
    ['truncated JSON', '{"memo":'],
    ['a memo of the wrong type', '{"memo":5}'],
    ['a memo longer than 1024', JSON.stringify({ memo: 'm'.repeat(1025) })]
  ]
  for (const [name, json] of badPayloads) {
    test(`payload that is ${name} -> TX_MALFORMED`, () => {
      const payload = Buffer.from(json, 'utf8').toString('base64')
      assertKithError(() => checkSubmission(makeTx({ payload }), NOW), 'TX_MALFORMED', 'payload')
    })
  }

  test('payload: empty string means {}, unknown members are ignored', () => {
    assert.deepEqual(checkSubmission(makeTx({ payload: '' }), NOW).payload, {})
    assert.deepEqual(checkSubmission(makeTx({ payload: encodePayload({ memo: 'x', other: [1] }) }), NOW).payload, { memo: 'x' })
  })

  test('order of checks: submittable, timestamp, fee, payload, type rule, signature', () => {
    const late = formatTimestamp(NOW + 10 * MINUTE)
    // client-submittable before timestamp
    assertKithError(() => checkSubmission(makeTx({ type: 'BLOCK_REWARD', timestamp: late }), NOW), 'TX_NOT_ALLOWED')
    // timestamp before fee and signature
    assertKithError(() => checkSubmission({ ...makeTx({ timestamp: late, fee: 1 }), signature: 'A'.repeat(86) + '==' }, NOW), 'TX_BAD_TIMESTAMP')
    // fee before payload
    assertKithError(() => checkSubmission(makeTx({ fee: 1, payload: 'W10=' }), NOW), 'TX_FEE_TOO_LOW')
    // payload before the type rule
    assertKithError(() => checkSubmission(makeTx({ amount: 0, payload: 'W10=' }), NOW), 'TX_MALFORMED')
    // type rule before signature
    assertKithError(() => checkSubmission({ ...makeTx({ amount: 0 }), signature: 'A'.repeat(86) + '==' }, NOW), 'TX_BAD_FIELD')
  })
})
