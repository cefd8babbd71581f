/** The chain's pages: home (figures, latest blocks and transactions, live), a block, a transaction, an address, validators and peers. */
import {
  enc, find, getJson, replayBlocks, usernameOf, type AddressSummary, type Block, type BlockEvent, type ContractInfo, type ContractList, type Identity, type Limits,
  type NetStats, type NodeVersion, type Peers, type TxDetail, type Validators
} from './api.js'
import { card, figure, fill, h, kv, link, notFound, table, type Child, type Column } from './dom.js'
import { CONTRACT_ID_RE, replayWindows, formatAmount, formatBytes, formatCount, formatTime, hexOfBase64, readable, shortId, timeAgo, utf8OfHex } from './format.js'
import { accountLink, blockLink, contractLink, copyButton, postLink, txEnds, txLink, typeTag, type Cleanup, type View } from './view.js'

const LATEST = 10
/** how far back the home page looks for recent transactions (the event stream replays at most 1,000 blocks) */
const REPLAY_BLOCKS = 1000
const GAP_RETRY_MS = 2000
const REFRESH_MS = 1000

// ---- home ----

/** The number of contracts deployed; undefined on a node without contracts. */
async function contractTotal (): Promise<number | undefined> {
  return (await find<ContractList>('/api/contracts?limit=1').catch(() => undefined))?.total
}

function figures (stats: NetStats, limits: Limits | undefined, contracts: number | undefined): HTMLElement {
  const relay = limits?.relay
  const feed = limits?.feed
  const cap = (used: number | undefined, max: number | null | undefined): string =>
    used === undefined ? '' : `${formatBytes(used)}${max === null || max === undefined ? ' stored, no cap' : ` of ${formatBytes(max)}`}`
  return h('div', { class: 'figures', id: 'figures' },
    figure('Height', formatCount(stats.height), stats.last_block_time !== undefined ? formatTime(stats.last_block_time) : undefined),
    figure('Transactions', formatCount(stats.total_txs), `${formatCount(stats.mempool_size)} pending`),
    figure('Supply', formatAmount(stats.supply)),
    figure('Validators', formatCount(stats.validator_count), stats.chain_id),
    contracts !== undefined ? figure('Contracts', link('/contracts', formatCount(contracts))) : null,
    relay?.stored_envelopes !== undefined ? figure('Mailbox envelopes', formatCount(relay.stored_envelopes), cap(relay.stored_bytes, relay.max_stored_bytes)) : null,
    feed?.live_posts !== undefined ? figure('Feed posts', formatCount(feed.live_posts), cap(feed.disk_used_bytes, feed.disk_limit_bytes)) : null)
}

function blockColumns (now: () => number): Array<Column<BlockEvent>> {
  return [
    { title: 'Block', cell: (b) => blockLink(b.height) },
    { title: 'Age', cell: (b) => h('span', { title: formatTime(b.time) }, timeAgo(b.time, now())) },
    { title: 'Txs', class: 'num', cell: (b) => h('span', { 'data-tx-count': String(b.tx_count) }, formatCount(b.tx_count)) },
    { title: 'Proposer', class: 'wide', cell: (b) => accountLink(b.proposer) },
    { title: 'Hash', class: 'wide', cell: (b) => h('span', { class: 'mono', title: b.hash }, shortId(b.hash, 8)) }
  ]
}

/** The columns of a table of these transactions (ids shown by the end that tells them apart). */
function txColumns (txs: readonly TxDetail[]): Array<Column<TxDetail>> {
  const end = txEnds(txs.map((t) => t.id))
  return [
    { title: 'Transaction', class: 'txid', cell: (t) => txLink(t.id, end(t.id)) },
    { title: 'Type', class: 'type', cell: (t) => typeTag(t.type) },
    { title: 'From', class: 'wide', cell: (t) => accountLink(t.from) },
    { title: 'To', class: 'wide', cell: (t) => accountLink(t.to) },
    { title: 'Amount', class: 'num', cell: (t) => formatAmount(t.amount_ut) },
    { title: 'Block', class: 'num wide', cell: (t) => blockLink(t.block_index) }
  ]
}

const txTable = (txs: readonly TxDetail[], empty?: string): HTMLElement => table(txColumns(txs), txs, empty)

async function txDetails (ids: readonly string[]): Promise<TxDetail[]> {
  const found = await Promise.all(ids.map(async (id) => await find<TxDetail>(`/api/tx/${enc(id)}`)))
  return found.filter((t): t is TxDetail => t !== undefined)
}

/** The newest `want` transaction ids of these blocks (newest block first). */
async function newestTxIds (heights: readonly number[], want: number): Promise<string[]> {
  const ids: string[] = []
  for (const height of heights) {
    const block = await find<Block>(`/api/blocks/${height}`)
    if (block !== undefined) ids.push(...[...block.tx_ids].reverse())
    if (ids.length >= want) break
  }
  return ids.slice(0, want)
}

/**
 * The dashboard. Drawn at once from the figures; the latest blocks come from the newest replay
 * window, and the latest transactions from the replay read newest first, window by window
 * (`replayWindows`), each table drawn as soon as it has something. Nothing is claimed about the
 * transactions until the whole range was read: on a slow link the page says it is still looking.
 */
export async function homePage (view: View): Promise<Cleanup> {
  // listen first: a block committed while the page loads is not lost between the figures and the replay
  const latest = new Map<number, BlockEvent>()
  let shownHeights = new Set<number>()
  let latestTxs: TxDetail[] = []
  let scan: 'reading' | 'done' | 'failed' = 'reading'
  let scanned = 0
  let figureBox: HTMLElement | undefined
  let blocksBox: HTMLElement | undefined
  let txsBox: HTMLElement | undefined
  const blockCols = blockColumns(view.now)
  const fetching = new Set<number>()
  // until the newest replay window is in, a live block's missing neighbours are on their way in it
  let blocksReady = false

  /** The newest blocks down to the first missing height: a gap is never drawn, it is read and then shown. */
  const drawBlocks = (): void => {
    if (blocksBox === undefined || !view.current()) return
    const blocks: BlockEvent[] = []
    for (const block of [...latest.values()].sort((a, b) => b.height - a.height)) {
      if (blocks.length === LATEST || (blocks.length > 0 && block.height !== blocks[blocks.length - 1].height - 1)) break
      blocks.push(block)
    }
    const top = blocks[0]?.height ?? 0
    for (const height of [...latest.keys()]) if (height <= top - LATEST) latest.delete(height)
    fill(blocksBox, table(blockCols, blocks, 'No blocks yet.'))
    const first = shownHeights.size === 0
    blocksBox.querySelectorAll('tbody tr').forEach((row, i) => { if (!first && !shownHeights.has(blocks[i].height)) row.classList.add('fresh') })
    shownHeights = new Set(blocks.map((b) => b.height))
  }
  /** The newest LATEST heights with none missing: a block the socket did not bring (it reconnected) is read. */
  const fillGaps = async (): Promise<void> => {
    const top = Math.max(0, ...latest.keys())
    const missing: number[] = []
    for (let height = top; height > Math.max(0, top - LATEST); height--) if (!latest.has(height) && !fetching.has(height)) missing.push(height)
    if (missing.length === 0) return
    for (const height of missing) fetching.add(height)
    let failed = false
    const found = await Promise.all(missing.map(async (height) => await find<Block>(`/api/blocks/${height}`).catch(() => { failed = true; return undefined })))
    for (const height of missing) fetching.delete(height)
    for (const block of found) if (block !== undefined) latest.set(block.height, block)
    drawBlocks()
    // a read that failed (the link dropped, the node was busy) is tried again: the next block may be a heartbeat away
    if (failed && view.current()) setTimeout(() => { if (view.current()) void fillGaps() }, GAP_RETRY_MS)
  }
  const addBlocks = (blocks: readonly BlockEvent[]): void => {
    for (const block of blocks) latest.set(block.height, block)
    drawBlocks()
    if (blocksReady) void fillGaps()
  }

  const drawTxs = (): void => {
    if (txsBox === undefined || !view.current()) return
    txsBox.dataset.state = scan
    const span = `the last ${formatCount(scanned)} blocks`
    const empty = scan === 'done'
      ? (scanned === 0 ? 'No transactions yet.' : `No transactions in ${span}.`)
      : scan === 'failed'
        ? 'Could not read the recent blocks from this node; new transactions appear here as they come.'
        : 'Looking for transactions in the newest blocks…'
    fill(txsBox, txTable(latestTxs, empty),
      scan === 'reading' && latestTxs.length > 0 && latestTxs.length < LATEST ? h('p', { class: 'muted' }, `Looking further back (${span} read)…`) : null)
  }
  /** Newest first by block (the order within a block as added), each id once, the newest LATEST kept. */
  const addTxs = (txs: readonly TxDetail[]): string[] => {
    const known = new Set(latestTxs.map((t) => t.id))
    const added = txs.filter((t) => !known.has(t.id))
    latestTxs = [...latestTxs, ...added].sort((a, b) => (b.block_index ?? 0) - (a.block_index ?? 0)).slice(0, LATEST)
    return added.map((t) => t.id)
  }

  // live: each block is drawn from its event at once; figures and transactions follow, at most once a second
  let refreshing = false
  let pendingTxBlocks: number[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const refresh = async (): Promise<void> => {
    refreshing = true
    try {
      const txBlocks = pendingTxBlocks.sort((a, b) => b - a)
      pendingTxBlocks = []
      const [fresh, freshLimits, freshContracts] = await Promise.all([getJson<NetStats>('/api/netstats'), find<Limits>('/api/limits').catch(() => undefined), contractTotal()])
      if (!view.current() || figureBox === undefined) return
      fill(figureBox, figures(fresh, freshLimits, freshContracts))
      if (txBlocks.length > 0) {
        const newest = await txDetails(await newestTxIds(txBlocks, LATEST))
        if (!view.current()) return
        const added = new Set(addTxs(newest))
        drawTxs()
        txsBox?.querySelectorAll('tbody tr').forEach((row, i) => { if (added.has(latestTxs[i]?.id)) row.classList.add('fresh') })
      }
    } catch {
      // the next block tries again
    } finally {
      refreshing = false
      if (pendingTxBlocks.length > 0 && view.current()) schedule()
    }
  }
  const schedule = (): void => {
    if (timer !== undefined || refreshing) return
    timer = setTimeout(() => { timer = undefined; void refresh() }, REFRESH_MS)
  }
  const stop = view.live.listen((block) => {
    if (latest.has(block.height)) return
    addBlocks([block])
    const height = figureBox?.querySelector('[data-figure="Height"]')
    if (height !== null && height !== undefined && block.height > Number(height.textContent?.replace(/,/g, ''))) height.textContent = formatCount(block.height)
    if (block.tx_count > 0) pendingTxBlocks.push(block.height)
    if (figureBox !== undefined) schedule()
  })
  const cleanup = (): void => { stop(); if (timer !== undefined) clearTimeout(timer) }

  try {
    const [stats, limits, contracts] = await Promise.all([getJson<NetStats>('/api/netstats'), find<Limits>('/api/limits').catch(() => undefined), contractTotal()])
    if (!view.current()) return cleanup
    figureBox = h('div', {}, figures(stats, limits, contracts))
    blocksBox = h('div', { id: 'latest-blocks' }, h('p', { class: 'muted' }, 'Loading…'))
    txsBox = h('div', { id: 'latest-txs' })
    fill(view.main,
      h('h1', {}, 'Dashboard'),
      figureBox,
      h('div', { class: 'grid2 more-right' }, card('Latest blocks', blocksBox), card('Latest transactions', txsBox)))
    drawTxs()
    if (pendingTxBlocks.length > 0) schedule()
    const windows = replayWindows(stats.height, REPLAY_BLOCKS)
    // the newest window is the latest-blocks table: wait for it, then read older ones in the background
    const newest = windows[0] !== undefined ? await replayBlocks(...windows[0]).catch(() => undefined) : []
    if (!view.current()) return cleanup
    blocksReady = true
    if (newest === undefined) {
      // no event stream: the latest blocks one by one, and no claim about transactions
      await fillGapsFrom(stats.height)
      scan = 'failed'
      drawTxs()
      return cleanup
    }
    addBlocks(newest)
    void scanForTxs(windows, newest)
  } catch (err) {
    cleanup()
    throw err
  }
  return cleanup

  /** A dropped stream is read again (a phone's link comes and goes): twice, after 2 s and 4 s. */
  async function withRetries<T> (read: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await read()
      } catch (err) {
        if (attempt >= 2 || !view.current()) throw err
        await new Promise((resolve) => setTimeout(resolve, 2000 * 2 ** attempt))
      }
    }
  }

  async function fillGapsFrom (head: number): Promise<void> {
    const heights = Array.from({ length: Math.min(LATEST, head) }, (_, i) => head - i)
    const found = await Promise.all(heights.map(async (height) => await find<Block>(`/api/blocks/${height}`).catch(() => undefined)))
    addBlocks(found.filter((b): b is Block => b !== undefined))
  }

  /** Reads the windows newest first, adding the transactions of each block that holds any, until LATEST are found. */
  async function scanForTxs (windows: Array<[number, number]>, newest: BlockEvent[]): Promise<void> {
    try {
      for (const [i, range] of windows.entries()) {
        const blocks = i === 0 ? newest : await withRetries(async () => await replayBlocks(...range))
        if (!view.current()) return
        const withTxs = blocks.filter((b) => b.tx_count > 0).map((b) => b.height).reverse()
        for (const height of withTxs) {
          if (latestTxs.length >= LATEST && (latestTxs.at(-1)?.block_index ?? 0) >= height) break
          addTxs(await txDetails(await newestTxIds([height], LATEST)))
          if (!view.current()) return
          drawTxs()
        }
        scanned = windows[0][1] - range[0]
        if (latestTxs.length >= LATEST) break
        drawTxs()
      }
      scan = 'done'
    } catch {
      scan = 'failed'
    }
    drawTxs()
  }
}

// ---- a block ----

const TX_DETAILS_SHOWN = 50

export async function blockPage (view: View, heightText: string): Promise<Cleanup> {
  const height = Number(heightText)
  const block = Number.isSafeInteger(height) && height >= 1 ? await find<Block>(`/api/blocks/${height}`) : undefined
  if (!view.current()) return undefined
  if (block === undefined) {
    fill(view.main, notFound(`No block at height ${heightText} on this node.`, 'The chain may not have reached it yet.'))
    return undefined
  }
  const txs = await txDetails(block.tx_ids.slice(0, TX_DETAILS_SHOWN))
  if (!view.current()) return undefined
  const rest = block.tx_ids.slice(TX_DETAILS_SHOWN)
  const restShown = rest.slice(0, 500)
  const restEnd = txEnds(restShown)
  fill(view.main,
    h('h1', {}, `Block #${formatCount(block.height)}`),
    card(undefined, kv([
      ['Height', String(block.height)],
      ['Hash', h('span', { class: 'mono' }, block.hash)],
      ['Time', `${formatTime(block.time)} (${timeAgo(block.time, view.now())})`],
      ['Transactions', h('span', { 'data-tx-count': String(block.tx_count) }, formatCount(block.tx_count))],
      ['Proposer', accountLink(block.proposer, true)],
      ['Previous', block.height > 1 ? link(`/block/${block.height - 1}`, h('span', { class: 'mono' }, block.prev_hash)) : h('span', { class: 'mono' }, block.prev_hash)],
      ['State root', h('span', { class: 'mono' }, block.state_root)],
      ['Tx root', h('span', { class: 'mono' }, block.tx_root)],
      ['Certified', block.commit === null ? 'genesis' : [`round ${block.commit.round} by `, block.commit.signers.map((s, i) => [i > 0 ? ', ' : '', accountLink(s)])]]
    ]),
    h('div', { class: 'pager' },
      block.height > 1 ? link(`/block/${block.height - 1}`, '← Previous block') : null,
      link(`/block/${block.height + 1}`, 'Next block →'))),
    card('Transactions', txTable(txs, 'This block holds no transactions.'),
      rest.length > 0 ? h('p', {}, `and ${formatCount(rest.length)} more: `, restShown.map((id, i) => [i > 0 ? ', ' : '', txLink(id, restEnd(id))])) : null))
  return undefined
}

// ---- a transaction ----

/** Data a contract returned or logged: text when it is readable UTF-8, else hex. */
function dataOf (b64: string): Child {
  const hex = hexOfBase64(b64) ?? ''
  const text = readable(utf8OfHex(hex))
  return text !== undefined ? h('span', { id: 'call-return' }, text) : h('span', { class: 'mono', id: 'call-return' }, hex === '' ? '(empty)' : hex)
}

/**
 * The contract rows of a CALL_CONTRACT (the contract, method, arguments, gas, the outcome, what
 * it returned) and of a DEPLOY_CONTRACT (the contract it created); none for other types.
 */
async function contractRows (tx: TxDetail): Promise<Array<[string, Child | undefined]>> {
  const payload = tx.payload as Record<string, unknown> | undefined
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  const contractId = tx.type === 'CALL_CONTRACT' ? str(payload?.contract_id) : tx.type === 'DEPLOY_CONTRACT' ? str(tx.contract_id) : undefined
  if (contractId === undefined) return []
  const contract = CONTRACT_ID_RE.test(contractId) ? await find<ContractInfo>(`/api/contracts/${contractId}`).catch(() => undefined) : undefined
  const contractCell: Child = contract !== undefined
    ? h('span', { id: 'call-contract' }, contractLink(contractId, contract.name))
    : h('span', { id: 'call-contract' }, h('span', { class: 'mono' }, contractId), h('span', { class: 'muted' }, tx.block_index === undefined ? ' (once confirmed)' : ' (not on this node)'))
  if (tx.type === 'DEPLOY_CONTRACT') return [['Contract', contractCell]]
  const result = tx.call_result
  const args = str(payload?.args_json) ?? ''
  return [
    ['Contract', contractCell],
    ['Method', h('span', { class: 'mono', id: 'call-method' }, str(payload?.method) ?? '')],
    ['Arguments', args === '' ? h('span', { class: 'muted' }, 'none') : h('span', { class: 'mono', id: 'call-args' }, args)],
    ['Gas limit', typeof payload?.gas_limit === 'number' ? formatCount(payload.gas_limit) : undefined],
    ['Gas used', tx.gas_used !== undefined ? formatCount(tx.gas_used) : undefined],
    ['Gas cost', result !== undefined ? formatAmount(result.gas_cost_ut) : undefined],
    ['Outcome', result === undefined
      ? undefined
      : h('span', { id: 'call-outcome', 'data-ok': String(result.ok) },
        result.ok ? h('span', { class: 'tag ok' }, 'ok') : [h('span', { class: 'tag bad' }, 'failed'), ' ', result.error ?? '']) ],
    ['Returned', result?.return_b64 !== undefined ? dataOf(result.return_b64) : undefined]
  ]
}

/** The payload as shown: a deploy's wasm is summed up by its size (the code hash is on the contract's page). */
function shownPayload (tx: TxDetail): unknown {
  const payload = tx.payload as Record<string, unknown> | undefined
  if (tx.type !== 'DEPLOY_CONTRACT' || typeof payload?.code_b64 !== 'string') return tx.payload
  return { ...payload, code_b64: `(${formatBytes(Math.floor(payload.code_b64.replace(/=+$/, '').length * 3 / 4))} of wasm)` }
}

export async function txPage (view: View, id: string): Promise<Cleanup> {
  const tx = await find<TxDetail>(`/api/tx/${enc(id)}`)
  if (!view.current()) return undefined
  if (tx === undefined) {
    fill(view.main, notFound(`No transaction ${id} on this node.`))
    return undefined
  }
  const payload = tx.payload as Record<string, unknown> | undefined
  const postId = typeof payload?.post_id === 'string' ? payload.post_id : undefined
  const contract = await contractRows(tx)
  if (!view.current()) return undefined
  fill(view.main,
    h('h1', {}, 'Transaction'),
    card(undefined, kv([
      ['Id', [h('span', { class: 'mono' }, tx.id), ' ', copyButton(tx.id)]],
      ['Type', typeTag(tx.type)],
      ['Status', tx.block_index !== undefined ? 'confirmed' : (tx.status ?? 'pending')],
      ['Block', tx.block_index !== undefined ? [blockLink(tx.block_index), tx.block_time !== undefined ? ` · ${formatTime(tx.block_time)}` : ''] : undefined],
      ['Time', formatTime(tx.time)],
      ['From', [accountLink(tx.from, true), tx.from_addr !== undefined ? h('div', { class: 'muted mono' }, tx.from_addr) : null]],
      ['To', tx.to !== undefined ? [accountLink(tx.to, true), tx.to_addr !== undefined ? h('div', { class: 'muted mono' }, tx.to_addr) : null] : undefined],
      ['Amount', h('span', { 'data-amount-ut': String(tx.amount_ut) }, formatAmount(tx.amount_ut))],
      ['Fee', formatAmount(tx.fee_ut)],
      ['Gas used', tx.gas_used !== undefined && tx.type !== 'CALL_CONTRACT' ? formatCount(tx.gas_used) : undefined],
      ...contract,
      ['Memo', tx.memo !== undefined && tx.memo !== '' ? tx.memo : undefined],
      ['Post', postId !== undefined ? postLink(postId, postId) : undefined],
      ['Signature', tx.signature_hex !== undefined ? h('span', { class: 'mono muted' }, tx.signature_hex) : undefined]
    ])),
    card('Payload', tx.payload !== undefined
      ? h('pre', { id: 'payload' }, JSON.stringify(shownPayload(tx), null, 2))
      : h('div', {}, h('p', { class: 'muted' }, 'Not decoded by this node; the raw bytes:'), h('pre', { id: 'payload' }, tx.payload_hex ?? ''))))
  return undefined
}

// ---- an address ----

const PAGE_SIZE = 20
/** GET /api/address answers the newest 500 at most (its `limit`); older ones are not reachable */
const HISTORY_MAX = 500

export async function addressPage (view: View, account: string, pageText = '1'): Promise<Cleanup> {
  const page = Math.max(1, Math.min(Math.floor(Number(pageText)) || 1, HISTORY_MAX / PAGE_SIZE))
  const [summary, identity] = await Promise.all([
    find<AddressSummary>(`/api/address/${enc(account)}?limit=${page * PAGE_SIZE}`),
    find<Identity>(`/api/identity/${enc(account)}`).catch(() => undefined)
  ])
  if (!view.current()) return undefined
  if (summary === undefined) {
    fill(view.main, notFound(`${account} is neither an Ed25519 pubkey nor a kith address.`))
    return undefined
  }
  const username = await usernameOf(summary.pub_key)
  if (!view.current()) return undefined
  const rows = summary.transactions.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)
  const older = summary.tx_count > page * PAGE_SIZE && page * PAGE_SIZE < HISTORY_MAX
  const mine = summary.pub_key
  const end = txEnds(rows.map((t) => t.id))
  const columns: Array<Column<typeof rows[number]>> = [
    { title: 'Transaction', class: 'txid', cell: (t) => txLink(t.id, end(t.id)) },
    { title: 'Type', class: 'type', cell: (t) => typeTag(t.type) },
    { title: 'Counterparty', class: 'wide', cell: (t) => (t.from === mine ? ['→ ', accountLink(t.to)] : ['← ', accountLink(t.from)]) },
    { title: 'Amount', class: 'num', cell: (t) => `${t.from === mine && t.amount_ut > 0 ? '−' : ''}${formatAmount(t.amount_ut)}` },
    { title: 'Block', class: 'num wide', cell: (t) => blockLink(t.block_index) },
    { title: 'Time', class: 'wide', cell: (t) => timeAgo(t.time, view.now()) }
  ]
  fill(view.main,
    h('h1', {}, 'Address'),
    card(undefined, kv([
      ['Address', h('span', { class: 'mono' }, summary.address)],
      ['Pubkey', h('span', { class: 'mono' }, summary.pub_key)],
      ['Username', username !== undefined ? h('span', { id: 'username' }, `@${username}`) : undefined],
      ['Balance', h('span', { id: 'balance', 'data-balance-ut': String(summary.balance_ut) }, formatAmount(summary.balance_ut))],
      ['Transactions', formatCount(summary.tx_count)],
      ['Identity', identity !== undefined ? link(`/identity/${mine}`, identity.nickname !== '' ? identity.nickname : 'registered identity') : h('span', { class: 'muted' }, 'none registered')]
    ])),
    card('History', table(columns, rows, 'No confirmed transactions.'),
      h('div', { class: 'pager' },
        page > 1 ? link(`/address/${mine}/${page - 1}`, '← Newer') : null,
        h('span', { class: 'muted' }, summary.tx_count === 0 ? '' : `${(page - 1) * PAGE_SIZE + 1}–${(page - 1) * PAGE_SIZE + rows.length} of ${formatCount(summary.tx_count)}`),
        older ? link(`/address/${mine}/${page + 1}`, 'Older →') : null,
        summary.tx_count > HISTORY_MAX && !older ? h('span', { class: 'muted' }, `(the node lists the newest ${HISTORY_MAX})`) : null)))
  return undefined
}

// ---- validators and peers ----

export async function networkPage (view: View): Promise<Cleanup> {
  const [validators, peers, version] = await Promise.all([
    getJson<Validators>('/api/validators'), getJson<Peers>('/api/peers'), getJson<NodeVersion>('/api/well-known-version')
  ])
  if (!view.current()) return undefined
  const build = version.build
  fill(view.main,
    h('h1', {}, 'Validators and peers'),
    card(`Validators (${validators.count})`, table([
      { title: 'Validator', cell: (v) => [v.name !== undefined ? h('strong', {}, v.name, ' ') : null, accountLink(v.pub_key)] },
      { title: 'Address', class: 'wide', cell: (v) => h('span', { class: 'mono', title: v.address }, shortId(v.address, 10)) },
      { title: 'Power', class: 'num', cell: (v) => `${formatCount(v.power)} (${Math.round((v.power / Math.max(1, validators.total_power)) * 100)}%)` }
    ], validators.validators)),
    card(`Peers (${peers.count})`, table([
      { title: 'Peer', cell: (p) => h('span', { class: 'mono', title: p.peer_id }, shortId(p.peer_id, 8)) },
      { title: 'Version', cell: (p) => p.version ?? '—' },
      { title: 'Protocol', class: 'num wide', cell: (p) => p.protocol_version ?? '—' },
      { title: 'Height', class: 'num wide', cell: (p) => (p.height !== undefined ? formatCount(p.height) : '—') },
      { title: 'Address', class: 'wide', cell: (p) => h('span', { class: 'mono', title: p.multiaddr ?? '' }, p.multiaddr ?? '') }
    ], peers.peers, 'No peers connected.')),
    card('This node', kv([
      ['Version', h('span', { id: 'node-version' }, version.node_version)],
      ['Protocol', String(version.protocol_version)],
      ['Chain', version.chain_id],
      ['Build', build !== undefined ? [build.tag ?? '', build.commit !== undefined ? ` · ${build.commit.slice(0, 12)}` : '', build.date !== undefined ? ` · ${build.date}` : ''] : undefined],
      ['Features', h('div', { class: 'tags' }, version.features.map((f) => h('span', { class: 'tag' }, f)))]
    ])))
  return undefined
}
