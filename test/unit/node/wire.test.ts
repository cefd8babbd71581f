/** decodeProposal, decodeBlocksResponse and decodeTxBatch: transactions a node already holds skip the check; every other one is checked as TransactionSchema checks it. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newAccount, transfer } from '../../../src/client/index.js'
import type { Transaction } from '../../../src/chain/index.js'
import { decodeBlocksResponse, decodeProposal, decodeTxBatch, encode } from '../../../src/node/wire.js'

const alice = newAccount()
const bob = newAccount()

function proposalWith (txs: unknown[]): Uint8Array {
  return encode({
    height: 3,
    round: 0,
    pol_round: -1,
    block: {
      header: { chain_id: 'c', height: 3, time: 1, prev_hash: 'a'.repeat(64), tx_root: 'b'.repeat(64), state_root: 'c'.repeat(64), proposer: alice.pub, last_commit_hash: '' },
      txs,
      last_commit: null
    },
    block_hash: 'd'.repeat(64),
    proposer: alice.pub,
    signature: 'sig'
  })
}

test('known transactions are taken as held; unknown ones are checked; a bad one fails the whole proposal', () => {
  const held = transfer(alice, bob.pub, 5)
  const fresh = transfer(bob, alice.pub, 7)
  const known = new Map<string, Transaction>([[held.id, held]])
  const decoded = decodeProposal(proposalWith([held, fresh]), (id) => known.get(id))
  assert.ok(decoded !== undefined)
  assert.equal(decoded.block.txs[0], held, 'the held object itself, not a re-parse')
  assert.deepEqual(decoded.block.txs[1], fresh)

  assert.equal(decodeProposal(proposalWith([held, { ...fresh, amount: -1 }]), (id) => known.get(id)), undefined)
  // the id of a held transaction with other content is checked as any other, and may be valid
  const reused = { ...transfer(bob, alice.pub, 9), id: held.id }
  assert.deepEqual(decodeProposal(proposalWith([reused]), (id) => known.get(id))?.block.txs[0], reused)
  assert.equal(decodeProposal(proposalWith([{ ...held, signature: 'nope' }]), (id) => known.get(id)), undefined)
  assert.equal(decodeProposal(Buffer.from('{"height":'), () => undefined), undefined)
})

test('a block-sync answer: every transaction checked as the schema checks it, unknown members dropped; one bad transaction fails the whole answer', () => {
  const a = transfer(alice, bob.pub, 5)
  const b = transfer(bob, alice.pub, 7)
  const block = (txs: unknown[]): unknown => ({
    block: {
      header: { chain_id: 'c', height: 3, time: 1, prev_hash: 'a'.repeat(64), tx_root: 'b'.repeat(64), state_root: 'c'.repeat(64), proposer: alice.pub, last_commit_hash: '' },
      txs,
      last_commit: null
    },
    hash: 'd'.repeat(64),
    commit: { height: 3, round: 0, block_hash: 'd'.repeat(64), signatures: [] }
  })
  const decoded = decodeBlocksResponse(encode({ blocks: [block([a]), block([{ ...b, extra: 1 }])] }))
  assert.ok(decoded !== undefined)
  assert.deepEqual(decoded.blocks.map((s) => s.block.txs), [[a], [b]])
  assert.equal(Object.hasOwn(decoded.blocks[1].block.txs[0], 'extra'), false)

  assert.equal(decodeBlocksResponse(encode({ blocks: [block([a]), block([{ ...b, timestamp: '2026-02-30T00:00:00Z' }])] })), undefined)
  assert.equal(decodeBlocksResponse(encode({ blocks: [block([{ ...a, fee: 1.5 }])] })), undefined)
  assert.equal(decodeBlocksResponse(encode({ blocks: [{ ...(block([a]) as object), hash: 'nope' }] })), undefined)
  assert.equal(decodeBlocksResponse(Buffer.from('{"blocks":[')), undefined)
  assert.deepEqual(decodeBlocksResponse(encode({ blocks: [] })), { blocks: [] })
})

test('a gossiped batch: 1 to 1,000 transactions, each checked as the schema checks it; one bad transaction fails the batch', () => {
  const a = transfer(alice, bob.pub, 5)
  assert.deepEqual(decodeTxBatch(encode([{ ...a, extra: 1 }])), [a])
  assert.equal(decodeTxBatch(encode([])), undefined)
  assert.equal(decodeTxBatch(encode(Array.from({ length: 1001 }, () => a))), undefined)
  assert.equal(decodeTxBatch(encode([a, { ...a, timestamp: '2026-02-30T00:00:00Z' }])), undefined)
  assert.equal(decodeTxBatch(encode({ txs: [a] })), undefined)
  assert.equal(decodeTxBatch(Buffer.from('[{')), undefined)
})
