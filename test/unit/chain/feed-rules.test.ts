/**
 * The feed's transaction rules, one test per rule of the spec (Feed rules 9-11, the Post and
 * Follow state tables) over MemoryState: CREATE_POST, DELETE_POST, LIKE_POST, UNLIKE_POST,
 * FOLLOW, UNFOLLOW, and their fee routing.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  GenesisSchema, MAX_POST_SIZE, Posts, Registry, StateKeys, StateOverlay, applyTx, checkStateless, encodePayload, formatTimestamp, genesisState,
  postFee, signTx, type BlockContext, type ChainParams, type CheckedTx, type StateReader, type Transaction
} from '../../../src/chain/index.js'
import { toHex, type KeyPair } from '../../../src/crypto/index.js'
import { ALICE, BOB, CAROL, VALIDATOR, aliceKey, assertKithError, bobKey, carolKey } from '../../helpers/fixtures.js'

const PARAMS: ChainParams = { block_reward_ut: 0, max_block_txs: 100, gas_price: 1 }
const T = Date.parse('2026-03-04T05:06:07Z')
const CTX: BlockContext = { height: 3, time: T, proposer: VALIDATOR, params: PARAMS }
const GENESIS = GenesisSchema.parse({
  chain_id: 'kith-test',
  genesis_time: '2026-01-01T00:00:00Z',
  params: PARAMS,
  validators: [{ pub_key: VALIDATOR, power: 1 }],
  alloc: [{ pub_key: ALICE, amount_ut: 10_000_000 }, { pub_key: BOB, amount_ut: 10_000_000 }, { pub_key: CAROL, amount_ut: 10_000_000 }],
  relays: [{ pub_key: CAROL, x25519_pub_key: 'c3'.repeat(32), fee_per_msg_ut: 0 }]
})
const RELAY = CAROL
const HASH_B64 = Buffer.alloc(32, 7).toString('base64')
const POST_A = 'a'.repeat(32)
const POST_B = 'b'.repeat(32)

let seq = 0
function tx (key: KeyPair, type: Transaction['type'], payload: unknown, over: Partial<Omit<Transaction, 'signature' | 'from'>> = {}): Transaction {
  seq += 1
  return signTx({
    id: `tx-feed-${seq}`, type, from: toHex(key.publicKey), to: '', amount: 0, fee: 1000,
    payload: encodePayload(payload), timestamp: formatTimestamp(T), ...over
  }, key.secretKey)
}

function createPost (key: KeyPair, over: Record<string, unknown> = {}, txOver: Partial<Omit<Transaction, 'signature' | 'from'>> = {}): Transaction {
  const payload = { post_id: POST_A, content_hash: HASH_B64, size: 500, hosting_relay: RELAY, reply_to: '', quote_of: '', ...over }
  return tx(key, 'CREATE_POST', payload, { fee: postFee(payload.size as number), ...txOver })
}

function fresh (): StateOverlay {
  return new StateOverlay(genesisState(GENESIS).state)
}

/** Applies as a block does: a refused transaction leaves no write behind. */
function apply (state: StateOverlay, t: Transaction, ctx: BlockContext = CTX): void {
  const scratch = state.child()
  applyTx(scratch, checkStateless(t), ctx)
  scratch.commitTo(state)
}

function bal (state: StateReader, pub: string): number {
  return (state.get(StateKeys.balance(pub)) as number | undefined) ?? 0
}

describe('CREATE_POST', () => {
  test('records the post with the block time and credits the whole fee to the hosting relay', () => {
    const state = fresh()
    apply(state, createPost(aliceKey))
    const post = Posts.get(state, POST_A)
    assert.deepEqual(post, {
      author: ALICE, size: 500, content_hash: Buffer.alloc(32, 7).toString('hex'), hosting_relay: RELAY, reply_to: '', quote_of: '',
      deleted: false, created_ms: T, likes: 0, tx_id: post?.tx_id
    })
    assert.equal(bal(state, RELAY), 10_000_000 + 1500, 'BasePostFee + 500 × PostByteFee goes to the hosting relay')
    assert.equal(bal(state, VALIDATOR), 0, 'the block validator gets none of it')
    assert.equal(bal(state, ALICE), 10_000_000 - 1500)
  })

  test('hosting_relay must not be the author: a relay cannot credit its own post fee back to itself', () => {
    const state = fresh()
    assertKithError(() => checkStateless(createPost(carolKey, { hosting_relay: CAROL })), 'FEED_BAD_HOSTING_RELAY', 'must not be the author')
    assertKithError(() => apply(state, createPost(carolKey, { hosting_relay: CAROL })), 'FEED_BAD_HOSTING_RELAY', 'must not be the author')
    assert.equal(bal(state, CAROL), 10_000_000, 'nothing debited, nothing credited')
    assert.equal(Posts.get(state, POST_A), undefined)
  })

  test('hosting_relay must be a registered relay; once it registers, the post applies', () => {
    const state = fresh()
    assertKithError(() => apply(state, createPost(aliceKey, { hosting_relay: BOB })), 'FEED_BAD_HOSTING_RELAY', 'not a registered relay')
    assert.deepEqual([bal(state, ALICE), bal(state, BOB), bal(state, VALIDATOR)], [10_000_000, 10_000_000, 0], 'no fee moved')
    assert.equal(Posts.get(state, POST_A), undefined)
    apply(state, tx(bobKey, 'REGISTER_RELAY', { x25519_pub_key: 'b2'.repeat(32), fee_per_msg_ut: 0 }))
    apply(state, createPost(aliceKey, { hosting_relay: BOB }))
    assert.equal(bal(state, BOB), 10_000_000 - 1000 + 1500)
  })

  test('a genesis relay is registered from height 0', () => {
    const state = fresh()
    assert.deepEqual(Registry.relays(state), [CAROL])
    assert.deepEqual(Registry.relay(state, CAROL), {
      x25519_pub_key: 'c3'.repeat(32), fee_per_msg_ut: 0, multiaddr: '', last_heartbeat: 0, wallet: '', registered_at: Date.parse('2026-01-01T00:00:00Z') / 1000
    })
  })

  test('fee must be at least BasePostFee + size × PostByteFee', () => {
    assertKithError(() => checkStateless(createPost(aliceKey, { size: 2000 }, { fee: 2999 })), 'TX_FEE_TOO_LOW', '3000')
    checkStateless(createPost(aliceKey, { size: 2000 }, { fee: 3000 }))
  })

  test('size must be greater than 0 and at most MaxPostSize', () => {
    assertKithError(() => checkStateless(createPost(aliceKey, { size: 0 })), 'TX_MALFORMED', 'size')
    assertKithError(() => checkStateless(createPost(aliceKey, { size: MAX_POST_SIZE + 1 }, { fee: postFee(MAX_POST_SIZE + 1) })), 'TX_MALFORMED', 'MaxPostSize')
    checkStateless(createPost(aliceKey, { size: MAX_POST_SIZE }, { fee: postFee(MAX_POST_SIZE) }))
  })

  test('reply_to and quote_of are mutually exclusive', () => {
    assertKithError(() => checkStateless(createPost(aliceKey, { post_id: POST_B, reply_to: POST_A, quote_of: POST_A })), 'TX_INVALID', 'mutually exclusive')
  })

  test('a duplicate post_id is rejected', () => {
    const state = fresh()
    apply(state, createPost(aliceKey))
    assertKithError(() => apply(state, createPost(bobKey)), 'TX_CONFLICT', 'duplicate post_id')
  })

  test('a reply or quote names an existing, undeleted post', () => {
    const state = fresh()
    assertKithError(() => apply(state, createPost(bobKey, { post_id: POST_B, reply_to: POST_A })), 'TX_UNKNOWN_TARGET', 'unknown post')
    apply(state, createPost(aliceKey))
    apply(state, createPost(bobKey, { post_id: POST_B, reply_to: POST_A }))
    assert.equal(Posts.get(state, POST_B)?.reply_to, POST_A)
    apply(state, tx(aliceKey, 'DELETE_POST', { post_id: POST_A }))
    assertKithError(() => apply(state, createPost(bobKey, { post_id: 'c'.repeat(32), quote_of: POST_A })), 'TX_UNKNOWN_TARGET', 'deleted')
  })

  test('payload shape: post id, base64 content hash (hex is named as such), no recipient or amount', () => {
    assertKithError(() => checkStateless(createPost(aliceKey, { post_id: 'xyz' })), 'TX_MALFORMED', 'post_id')
    assertKithError(() => checkStateless(createPost(aliceKey, { content_hash: 'ab'.repeat(32) })), 'TX_MALFORMED', 'looks like hex')
    assertKithError(() => checkStateless(createPost(aliceKey, { hosting_relay: 'nope' })), 'TX_MALFORMED', 'hosting_relay')
    assertKithError(() => checkStateless(createPost(aliceKey, {}, { to: BOB })), 'TX_BAD_FIELD', '`to`')
    assertKithError(() => checkStateless(createPost(aliceKey, {}, { amount: 5 })), 'TX_BAD_FIELD', 'amount')
  })
})

describe('DELETE_POST', () => {
  test('only the author deletes; the record stays on chain with deleted=true; the fee goes to the block validator', () => {
    const state = fresh()
    apply(state, createPost(aliceKey))
    assertKithError(() => apply(state, tx(bobKey, 'DELETE_POST', { post_id: POST_A })), 'TX_NOT_ALLOWED', 'only from the post author')
    apply(state, tx(aliceKey, 'DELETE_POST', { post_id: POST_A }))
    assert.equal(Posts.get(state, POST_A)?.deleted, true)
    assert.equal(Posts.get(state, POST_A)?.author, ALICE)
    assert.equal(bal(state, VALIDATOR), 1000)
    assertKithError(() => apply(state, tx(aliceKey, 'DELETE_POST', { post_id: POST_A })), 'TX_UNKNOWN_TARGET', 'deleted')
    assertKithError(() => apply(state, tx(aliceKey, 'DELETE_POST', { post_id: POST_B })), 'TX_UNKNOWN_TARGET', 'unknown post')
  })
})

describe('LIKE_POST and UNLIKE_POST', () => {
  test('a like counts once; a second like is rejected; unlike needs a like', () => {
    const state = fresh()
    apply(state, createPost(aliceKey))
    apply(state, tx(bobKey, 'LIKE_POST', { post_id: POST_A }))
    assert.equal(Posts.get(state, POST_A)?.likes, 1)
    assert.equal(Posts.liked(state, POST_A, BOB), true)
    assertKithError(() => apply(state, tx(bobKey, 'LIKE_POST', { post_id: POST_A })), 'TX_CONFLICT', 'already liked')
    apply(state, tx(aliceKey, 'LIKE_POST', { post_id: POST_A }))
    assert.equal(Posts.get(state, POST_A)?.likes, 2)
    apply(state, tx(bobKey, 'UNLIKE_POST', { post_id: POST_A }))
    assert.equal(Posts.get(state, POST_A)?.likes, 1)
    assert.equal(Posts.liked(state, POST_A, BOB), false)
    assertKithError(() => apply(state, tx(bobKey, 'UNLIKE_POST', { post_id: POST_A })), 'TX_CONFLICT', 'has not liked')
    assert.equal(bal(state, VALIDATOR), 3000, 'like and unlike fees go to the block validator')
  })

  test('unknown or deleted posts cannot be liked', () => {
    const state = fresh()
    assertKithError(() => apply(state, tx(bobKey, 'LIKE_POST', { post_id: POST_A })), 'TX_UNKNOWN_TARGET', 'unknown post')
    apply(state, createPost(aliceKey))
    apply(state, tx(aliceKey, 'DELETE_POST', { post_id: POST_A }))
    assertKithError(() => apply(state, tx(bobKey, 'LIKE_POST', { post_id: POST_A })), 'TX_UNKNOWN_TARGET', 'deleted')
  })
})

describe('FOLLOW and UNFOLLOW', () => {
  test('follow records both directions; unfollow removes both; repeats are rejected', () => {
    const state = fresh()
    apply(state, tx(bobKey, 'FOLLOW', {}, { to: ALICE }))
    assert.equal(Posts.follows(state, BOB, ALICE), true)
    assert.notEqual(state.get(StateKeys.follower(ALICE, BOB)), undefined)
    assert.equal(Posts.follows(state, ALICE, BOB), false, 'a follow is one-way')
    assertKithError(() => apply(state, tx(bobKey, 'FOLLOW', {}, { to: ALICE })), 'TX_CONFLICT', 'already follows')
    apply(state, tx(bobKey, 'UNFOLLOW', {}, { to: ALICE }))
    assert.equal(Posts.follows(state, BOB, ALICE), false)
    assert.equal(state.get(StateKeys.follower(ALICE, BOB)), undefined)
    assertKithError(() => apply(state, tx(bobKey, 'UNFOLLOW', {}, { to: ALICE })), 'TX_CONFLICT', 'does not follow')
    assert.equal(bal(state, VALIDATOR), 2000)
  })

  test('needs a target other than the sender, and no amount', () => {
    assertKithError(() => checkStateless(tx(bobKey, 'FOLLOW', {})), 'TX_BAD_FIELD', '`to`')
    assertKithError(() => checkStateless(tx(bobKey, 'FOLLOW', {}, { to: BOB })), 'TX_BAD_FIELD', 'sender')
    assertKithError(() => checkStateless(tx(bobKey, 'UNFOLLOW', {}, { to: ALICE, amount: 1 })), 'TX_BAD_FIELD', 'amount')
  })
})

test('feed transactions pay at least the minimum fee', () => {
  for (const type of ['DELETE_POST', 'LIKE_POST', 'UNLIKE_POST'] as const) {
    assertKithError(() => checkStateless(tx(carolKey, type, { post_id: POST_A }, { fee: 999 })), 'TX_FEE_TOO_LOW')
  }
  assertKithError(() => checkStateless(tx(carolKey, 'FOLLOW', {}, { to: ALICE, fee: 999 })), 'TX_FEE_TOO_LOW')
})

// keep the helper's type in use for readers: a checked CREATE_POST carries its decoded payload
test('a checked CREATE_POST exposes its payload', () => {
  const checked: CheckedTx = checkStateless(createPost(aliceKey))
  assert.equal((checked.payload as { post_id: string }).post_id, POST_A)
})
