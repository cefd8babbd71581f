/**
 * Crash safety: concurrent submitters stream signed TRANSFERs while the node is killed with
 * SIGKILL (twice), then restarted on the same home. Every transaction the node answered
 * `accepted` must end up confirmed exactly once, and every balance must equal the genesis
 * allocation plus and minus what is actually confirmed. Requests cut off by the kill are not
 * counted as accepted; whether they were confirmed is read back from the node.
 */
import { after, describe, test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { Agent, request as httpRequest } from 'node:http'
import { newAccount, transfer, type Account, type Transaction } from '../../src/client/index.js'
import { http, startNode, stopAllNodes, waitFor, type ExitInfo, type NodeProcess } from '../helpers/node-process.js'

const T = 1_000_000
const SENDER_ALLOC_UT = 1_000_000 * T
const SENDERS = 4
const RECIPIENTS = 4
const WORKERS = 12
const KILLS = 2
const HISTORY_LIMIT = 500

interface TxDetail {
  id: string
  from: string
  to?: string
  amount_ut: number
  fee_ut: number
  block_index?: number
}

interface AddressSummary {
  balance_ut: number
  tx_count: number
  has_more: boolean
  transactions: Array<{ id: string, block_index: number }>
}

function randomInt (min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1))
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
async function pool<I, O> (items: readonly I[], limit: number, fn: (item: I) => Promise<O>): Promise<O[]> {
  const out: O[] = new Array<O>(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next
      next += 1
      out[index] = await fn(items[index])
    }
  }))
  return out
}

/** The transaction as the node knows it, or undefined when it answers 404. */
async function lookup (node: NodeProcess, id: string): Promise<TxDetail | undefined> {
  const res = await http(node.url, 'GET', `/api/tx/${id}`)
  if (res.status === 404) return undefined
  assert.equal(res.status, 200, `GET /api/tx/${id}: ${res.status} ${res.text}`)
  return res.json as TxDetail
}

class Ledger {
  /** answered `accepted` by the node */
  readonly accepted = new Map<string, Transaction>()
  /** the request failed without an answer (cut off by the kill) */
  readonly uncertain = new Map<string, Transaction>()
  /** any other answer: none is expected */
  readonly unexpected: string[] = []
}

/**
 * Streams transfers from WORKERS concurrent submitters until `target` of them were accepted
 * in this phase, then interrupts the node from inside that response handler, while the other
 * submitters still have requests in flight: `kill` is SIGKILL, `term` is SIGTERM (a clean
 * stop, which must exit 0). Returns how many were accepted in this phase.
 */
async function streamUntil (node: NodeProcess, ledger: Ledger, senders: Account[], recipients: Account[], target: number, interrupt: 'kill' | 'term'): Promise<number> {
  const url = `${node.url}/api/tx`
  let acceptedHere = 0
  let interrupted = false
  let stopped: Promise<ExitInfo> | undefined
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !interrupted; i++) {
      const sender = senders[(w + i) % senders.length]
      const recipient = recipients[randomInt(0, recipients.length - 1)]
      const tx = transfer(sender, recipient.pub, randomInt(1, 100_000), { fee: randomInt(1000, 1500) })
      let status: number
      let text: string
      try {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tx) })
        status = res.status
        text = await res.text()
      } catch (err) {
        ledger.uncertain.set(tx.id, tx)
        if (!interrupted) ledger.unexpected.push(`request failed before the ${interrupt}: ${err instanceof Error ? err.message : String(err)}`)
        return
      }
      let body: unknown
      try { body = JSON.parse(text) } catch { body = undefined }
      if (status === 200 && (body as { status?: unknown, id?: unknown } | undefined)?.status === 'accepted' && (body as { id?: unknown }).id === tx.id) {
        ledger.accepted.set(tx.id, tx)
        acceptedHere += 1
        if (acceptedHere >= target && !interrupted) {
          interrupted = true
          if (interrupt === 'kill') node.killSync()
          else {
            const last = transfer(senders[0], recipients[0].pub, 1)
            stopped = sigtermMidRequest(node, ledger, last)
            stopped.catch(() => undefined) // awaited below; this only marks the rejection handled early
          }
        }
      } else {
        ledger.unexpected.push(`${tx.id}: ${status} ${text}`)
      }
    }
  }
  await Promise.all(Array.from({ length: WORKERS }, async (_, w) => { await worker(w) }))
  if (interrupt === 'kill') {
    const exit = await node.kill9()
    assert.equal(exit.signal, 'SIGKILL', 'the node died of SIGKILL')
  } else {
    // node.stop() asserts a clean exit: code 0 within its timeout
    assert.deepEqual(await stopped, { code: 0, signal: null })
  }
  return acceptedHere
}

/**
 * SIGTERM while a request is in progress: the request's headers are in (the node answered
 * `100 Continue`), the node logged "shutting down", and only then does its body follow, on a
 * keep-alive connection. The answer is recorded in the ledger; resolves with the node's exit.
 */
async function sigtermMidRequest (node: NodeProcess, ledger: Ledger, tx: Transaction): Promise<ExitInfo> {
  const agent = new Agent({ keepAlive: true })
  const body = JSON.stringify(tx)
  const req = httpRequest(`${node.url}/api/tx`, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' }
  })
  const answer = new Promise<{ status: number, text: string } | undefined>((resolveAnswer) => {
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, text }))
      res.on('error', () => resolveAnswer(undefined))
    })
    req.on('error', () => resolveAnswer(undefined))
  })
  req.flushHeaders()
  try {
    await once(req, 'continue')
    const shuttingDown = node.nextLog((line) => line.msg === 'shutting down', 5000)
    const stopped = node.stop()
    stopped.catch(() => undefined) // awaited below
    await shuttingDown
    req.end(body)
    const res = await answer
    if (res === undefined) ledger.uncertain.set(tx.id, tx)
    else if (res.status === 200) ledger.accepted.set(tx.id, tx)
    else if (res.status === 503) ledger.uncertain.set(tx.id, tx)
    else ledger.unexpected.push(`${tx.id} (sent during shutdown): ${res.status} ${res.text}`)
    return await stopped
  } finally {
    agent.destroy()
  }
}

/** Waits until every accepted id is in a block and every uncertain one is in a block or unknown. */
async function settle (node: NodeProcess, ledger: Ledger, timeoutMs: number): Promise<Map<string, TxDetail>> {
  const confirmed = new Map<string, TxDetail>()
  const lost = new Set<string>()
  const missingAccepted: string[] = []
  const open = (): string[] => [...ledger.accepted.keys(), ...ledger.uncertain.keys()].filter((id) => !confirmed.has(id) && !lost.has(id))
  await waitFor(async () => {
    const ids = open()
    const details = await pool(ids, 16, async (id) => await lookup(node, id))
    ids.forEach((id, i) => {
      const detail = details[i]
      if (detail === undefined) {
        // An accepted transaction must never be unknown; an uncertain one may be.
        if (ledger.accepted.has(id)) missingAccepted.push(id)
        lost.add(id)
      } else if (typeof detail.block_index === 'number') {
        confirmed.set(id, detail)
      }
    })
    return open().length === 0
  }, timeoutMs, { intervalMs: 100, message: 'all accepted transactions confirmed' })
  assert.deepEqual(missingAccepted, [], 'accepted transactions unknown to the node after the restart')
  return confirmed
}

/**
 * Final check after the last restart: every accepted transaction confirmed exactly once, and
 * every balance equal to genesis plus and minus what is actually confirmed.
 */
async function verifyLedger (t: TestContext, node: NodeProcess, ledger: Ledger, senders: Account[], recipients: Account[]): Promise<void> {
  assert.deepEqual(ledger.unexpected, [], 'no answer other than accepted, and no failure before the kill')
  const confirmed = await settle(node, ledger, 20_000)
  const lostCount = ledger.uncertain.size - [...ledger.uncertain.keys()].filter((id) => confirmed.has(id)).length
  t.diagnostic(`${ledger.accepted.size} accepted, ${ledger.uncertain.size} cut off (${lostCount} of them never applied), ${confirmed.size} confirmed`)

  // each confirmed transaction is the one that was signed
  const all = new Map([...ledger.uncertain, ...ledger.accepted])
  for (const [id, detail] of confirmed) {
    const tx = all.get(id) as Transaction
    assert.deepEqual({ from: detail.from, to: detail.to, amount_ut: detail.amount_ut, fee_ut: detail.fee_ut },
      { from: tx.from, to: tx.to, amount_ut: tx.amount, fee_ut: tx.fee }, `detail of ${id}`)
  }

  // what the balances must be, from what is actually confirmed
  const expectedBalance = new Map<string, number>()
  const expectedIds = new Map<string, Set<string>>()
  const add = (pub: string, delta: number): void => { expectedBalance.set(pub, (expectedBalance.get(pub) ?? 0) + delta) }
  const touch = (pub: string, id: string): void => {
    const set = expectedIds.get(pub) ?? new Set<string>()
    set.add(id)
    expectedIds.set(pub, set)
  }
  for (const s of senders) add(s.pub, SENDER_ALLOC_UT)
  let fees = 0
  for (const id of confirmed.keys()) {
    const tx = all.get(id) as Transaction
    add(tx.from, -(tx.amount + tx.fee))
    add(tx.to, tx.amount)
    fees += tx.fee
    touch(tx.from, id)
    touch(tx.to, id)
  }

  const stats = await node.client.netstats()
  assert.equal(stats.total_txs, confirmed.size, 'total_txs counts each confirmed transaction once')
  assert.equal(stats.supply, SENDERS * SENDER_ALLOC_UT, 'supply unchanged')
  for (const detail of confirmed.values()) assert.ok((detail.block_index as number) <= stats.height)

  let sumOfBalances = 0
  for (const account of [...senders, ...recipients]) {
    const summary = (await http(node.url, 'GET', `/api/address/${account.pub}?limit=${HISTORY_LIMIT}`)).json as AddressSummary
    const ids = expectedIds.get(account.pub) ?? new Set<string>()
    assert.equal(summary.balance_ut, expectedBalance.get(account.pub) ?? 0, `balance of ${account.pub}`)
    assert.equal(summary.tx_count, ids.size, `tx_count of ${account.pub}`)
    const listed = summary.transactions.map((x) => x.id)
    assert.equal(new Set(listed).size, listed.length, `no transaction listed twice for ${account.pub}`)
    for (const id of listed) assert.ok(ids.has(id), `${id} in the history of ${account.pub} is a confirmed transaction of it`)
    if (ids.size <= HISTORY_LIMIT) {
      assert.equal(listed.length, ids.size)
      assert.equal(summary.has_more, false)
    }
    const heights = summary.transactions.map((x) => x.block_index)
    for (let i = 1; i < heights.length; i++) assert.ok(heights[i - 1] >= heights[i], `history of ${account.pub} is newest first`)
    sumOfBalances += summary.balance_ut
  }

  const validator = await node.client.address(node.validatorPub)
  assert.equal(validator.balance_ut, fees, 'the validator holds exactly the fees of the confirmed transactions')
  assert.equal(validator.tx_count, 0)
  assert.equal(sumOfBalances + validator.balance_ut, stats.supply, 'balances add up to the supply')
}

after(async () => { await stopAllNodes() })

describe('crash safety', () => {
  after(async () => { await stopAllNodes() })

  test('every accepted transfer survives kill -9 and is confirmed exactly once, with exact balances', async (t: TestContext) => {
    const senders = Array.from({ length: SENDERS }, () => newAccount())
    const recipients = Array.from({ length: RECIPIENTS }, () => newAccount())
    const node = await startNode({
      chainId: 'kith-crash-test',
      alloc: senders.map((s) => ({ pub: s.pub, amountUt: SENDER_ALLOC_UT })),
      blockIntervalMs: 100
    })
    const genesis = await node.genesis()
    assert.equal(genesis.params.block_reward_ut, 0, 'this test accounts for fees only; the genesis has no block reward')
    const ledger = new Ledger()

    for (let round = 1; round <= KILLS; round++) {
      const killAfter = randomInt(250, 350)
      const acceptedHere = await streamUntil(node, ledger, senders, recipients, killAfter, 'kill')
      t.diagnostic(`round ${round}: killed after ${acceptedHere} accepted (target ${killAfter}); ${ledger.uncertain.size} cut off so far`)
      assert.ok(acceptedHere >= killAfter)
      await node.restart()
      // everything accepted so far, before this kill and the ones before, is confirmed
      const confirmedSoFar = await settle(node, ledger, 20_000)
      for (const id of ledger.accepted.keys()) assert.ok(confirmedSoFar.has(id), `accepted ${id} confirmed after restart ${round}`)
    }

    await verifyLedger(t, node, ledger, senders, recipients)

    // and the node still works after all this
    const last = transfer(senders[0], recipients[0].pub, 1)
    await node.client.submit(last)
    await node.client.waitForConfirmation(last.id, { timeoutMs: 10_000, intervalMs: 50 })
    const exit = await node.stop()
    assert.deepEqual(exit, { code: 0, signal: null })
  })

  test('SIGTERM while submitters stream and a request is in progress exits 0 and loses no accepted transaction', async (t: TestContext) => {
    const senders = Array.from({ length: SENDERS }, () => newAccount())
    const recipients = Array.from({ length: RECIPIENTS }, () => newAccount())
    const node = await startNode({
      alloc: senders.map((s) => ({ pub: s.pub, amountUt: SENDER_ALLOC_UT })),
      blockIntervalMs: 100
    })
    const ledger = new Ledger()
    try {
      const accepted = await streamUntil(node, ledger, senders, recipients, randomInt(150, 250), 'term')
      t.diagnostic(`stopped after ${accepted} accepted; ${ledger.uncertain.size} cut off`)
    } finally {
      if (!node.isRunning) await node.restart()
    }
    await settle(node, ledger, 20_000)
    await verifyLedger(t, node, ledger, senders, recipients)
  })
})
