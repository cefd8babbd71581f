import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { KithError } from '../../../src/errors/index.js'
import { MAX_READ_NONCES_PER_CLIENT, MAX_READ_NONCES_PER_MAILBOX, READ_NONCE_TTL_MS, clientAddressKey } from '../../../src/relay/index.js'
import { MailboxAdmission } from '../../../src/relay/admission.js'
import { ReadNonces, parseInboxAuthHeader } from '../../../src/relay/read-auth.js'

const HOUR = 3600_000
const T0 = Date.UTC(2026, 0, 2)
const box = (n: number): string => n.toString(16).padStart(64, '0')

function refusal (fn: () => unknown): KithError {
  try {
    fn()
  } catch (err) {
    if (err instanceof KithError) return err
    throw err
  }
  assert.fail('expected a refusal')
}

describe('mailbox admission', () => {
  test('per client address and mailbox: a minute\'s allowance, then 429 with when to retry; other addresses and mailboxes unaffected', () => {
    const admission = new MailboxAdmission({ clientMailboxPerMin: 20, clientMailboxMax: 0, mailboxPerMin: 0 }, HOUR)
    for (let i = 0; i < 20; i++) admission.admitClient(box(1), '10.0.0.1', T0)
    const refused = refusal(() => admission.admitClient(box(1), '10.0.0.1', T0))
    assert.equal(refused.code, 'RELAY_CLIENT_QUOTA')
    assert.match(refused.message, /SVC_RELAY_CLIENT_MAILBOX_PER_MIN/)
    assert.equal(refused.details?.retryAfterSeconds, 3, 'one envelope every 3 s at 20 a minute')
    admission.admitClient(box(1), '10.0.0.2', T0)
    admission.admitClient(box(2), '10.0.0.1', T0)
    admission.admitClient(box(1), '10.0.0.1', T0 + 3000)
  })

  test('stored per client address and mailbox: capped within the retention time, room again as arrivals leave it; a refused or duplicate upload gives its place back', () => {
    const admission = new MailboxAdmission({ clientMailboxPerMin: 0, clientMailboxMax: 3, mailboxPerMin: 0 }, HOUR)
    admission.admitClient(box(1), '10.0.0.1', T0)
    admission.admitClient(box(1), '10.0.0.1', T0 + 1000)
    const notStored = admission.admitClient(box(1), '10.0.0.1', T0 + 2000)
    notStored.release()
    admission.admitClient(box(1), '10.0.0.1', T0 + 2000)
    const full = refusal(() => admission.admitClient(box(1), '10.0.0.1', T0 + 3000))
    assert.equal(full.code, 'RELAY_CLIENT_QUOTA')
    assert.match(full.message, /SVC_RELAY_CLIENT_MAILBOX_MAX/)
    assert.equal(full.details?.retryAfterSeconds, 3597, 'until the first arrival leaves the window')
    admission.admitClient(box(1), '10.0.0.9', T0 + 3000)
    admission.admitClient(box(1), '10.0.0.1', T0 + HOUR)
    assert.equal(refusal(() => admission.admitClient(box(1), '10.0.0.1', T0 + HOUR)).code, 'RELAY_CLIENT_QUOTA')
  })

  test('per mailbox: from all clients together, and separately from peers; a client refused by its own limit spends nothing of the mailbox\'s', () => {
    const admission = new MailboxAdmission({ clientMailboxPerMin: 2, clientMailboxMax: 0, mailboxPerMin: 4 }, HOUR)
    admission.admitClient(box(1), '10.0.0.1', T0)
    admission.admitClient(box(1), '10.0.0.1', T0)
    for (let i = 0; i < 5; i++) assert.equal(refusal(() => admission.admitClient(box(1), '10.0.0.1', T0)).code, 'RELAY_CLIENT_QUOTA')
    admission.admitClient(box(1), '10.0.0.2', T0)
    admission.admitClient(box(1), '10.0.0.3', T0)
    const busy = refusal(() => admission.admitClient(box(1), '10.0.0.4', T0))
    assert.equal(busy.code, 'RELAY_RECIPIENT_BUSY')
    assert.match(busy.message, /SVC_RELAY_MAILBOX_PER_MIN/)
    assert.equal(busy.details?.retryAfterSeconds, 15)
    for (let i = 0; i < 4; i++) assert.equal(admission.refusePeer(box(1), T0), undefined)
    assert.match(admission.refusePeer(box(1), T0) ?? '', /from peers/)
    assert.equal(admission.refusePeer(box(2), T0), undefined)
  })

  test('client address keys: IPv4 as is (also IPv4-mapped), IPv6 by its /64', () => {
    assert.equal(clientAddressKey('127.0.0.2'), '127.0.0.2')
    assert.equal(clientAddressKey('::ffff:127.0.0.2'), '127.0.0.2')
    assert.equal(clientAddressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
    assert.equal(clientAddressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64')
    assert.equal(clientAddressKey('2001:db8::1'), '2001:db8:0:0::/64')
    assert.equal(clientAddressKey('::1'), '0:0:0:0::/64')
    assert.equal(clientAddressKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
  })
})

describe('read nonces', () => {
  test('bounded per mailbox (oldest retired) and per client address (429 until one expires); expired ones forgotten', () => {
    const nonces = new ReadNonces()
    const minted = Array.from({ length: MAX_READ_NONCES_PER_MAILBOX + 1 }, () => nonces.mint(box(1), '10.0.0.1', T0).nonce)
    assert.equal(nonces.size, MAX_READ_NONCES_PER_MAILBOX)
    assert.equal(refusal(() => nonces.check(minted[0], box(1), T0)).code, 'UNAUTHORIZED', 'the oldest was retired')
    nonces.check(minted[1], box(1), T0)
    for (let i = nonces.size; i < MAX_READ_NONCES_PER_CLIENT; i++) nonces.mint(box(100 + i), '10.0.0.1', T0)
    const limited = refusal(() => nonces.mint(box(2), '10.0.0.1', T0 + 1000))
    assert.equal(limited.code, 'RELAY_READ_NONCE_LIMIT')
    assert.equal(limited.details?.retryAfterSeconds, 59)
    nonces.mint(box(2), '10.0.0.2', T0 + 1000)
    // a spent nonce frees its place
    nonces.spend(minted[1])
    nonces.mint(box(2), '10.0.0.1', T0 + 1000)
    assert.equal(refusal(() => nonces.check(minted[2], box(1), T0 + READ_NONCE_TTL_MS)).code, 'UNAUTHORIZED', 'expired')
    nonces.mint(box(3), '10.0.0.3', T0 + READ_NONCE_TTL_MS)
    assert.equal(nonces.size, 2 + 1, 'all of the first minute are forgotten')
  })

  test('the Kith-Inbox-Auth header: fields in any order, each checked', () => {
    const pub = 'Ab'.repeat(32)
    const sig = `${'A'.repeat(86)}==`
    assert.deepEqual(parseInboxAuthHeader(`sig=${sig}, nonce=${'0f'.repeat(16)},ed25519_pub=${pub}`), { ed25519_pub: pub.toLowerCase(), nonce: '0f'.repeat(16), sig })
    assert.match(refusal(() => parseInboxAuthHeader(`ed25519_pub=${pub}, sig=${sig}`)).message, /nonce must be/)
    assert.match(refusal(() => parseInboxAuthHeader(`ed25519_pub=${pub}, nonce=${'0f'.repeat(16)}, sig=abc`)).message, /sig must be/)
  })
})
