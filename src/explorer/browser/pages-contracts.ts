/** The contracts' pages: every contract (newest first) with the live gas price, and one contract with its state lookup and logs. */
import { enc, find, getJson, type ContractInfo, type ContractList, type ContractLogs, type ContractValue, type NetworkInfo } from './api.js'
import { card, figure, fill, h, kv, link, notFound, table, type Child, type Column } from './dom.js'
import { CONTRACT_ID_RE, cursorOf, formatAmount, formatBytes, formatCount, formatTime, newerPage, readable, shortId, utf8OfHex } from './format.js'
import { accountLink, blockLink, txEnds, txLink, type Cleanup, type View } from './view.js'

const PAGE_SIZE = 20
const REFRESH_MS = 1000

/** "← Newer · 21–40 of 75 · Older →" for a newest-first list read by cursor. */
function pager (route: string, before: number | undefined, shown: number, total: number, next: number | null): HTMLElement {
  const newer = newerPage(before, PAGE_SIZE, total)
  const first = total - Math.min(total, (before ?? total + 1) - 1) + 1
  return h('div', { class: 'pager' },
    newer !== undefined ? link(newer === 'newest' ? route : `${route}/${newer}`, '← Newer') : null,
    h('span', { class: 'muted' }, shown === 0 ? '' : `${formatCount(first)}–${formatCount(first + shown - 1)} of ${formatCount(total)}`),
    next !== null ? link(`${route}/${next}`, 'Older →') : null)
}

const genesis = (): Child => h('span', { class: 'muted' }, 'genesis')

const heightLink = (height: number): Child => (height <= 0 ? genesis() : blockLink(height))

function nameOf (c: ContractInfo): Child {
  return [
    h('strong', {}, c.name),
    c.version !== undefined ? h('span', { class: 'muted' }, ` ${c.version}`) : null,
    c.well_known ? [' ', h('span', { class: 'tag', 'data-well-known': '' }, 'well-known')] : null
  ]
}

/** The value of a state key as a person reads it: text when it is readable UTF-8, the hex, a u64 when 8 bytes. */
function stateValue (value: ContractValue): HTMLElement {
  if (value.value_hex === null) return h('p', { class: 'muted', 'data-state': 'unset' }, `"${value.key}" is not set.`)
  const text = readable(utf8OfHex(value.value_hex))
  return kv([
    ['Key', h('span', { class: 'mono' }, value.key)],
    ['Text', text !== undefined ? h('span', { id: 'state-text' }, text) : undefined],
    ['u64', value.value_u64 !== undefined ? h('span', { id: 'state-u64' }, String(value.value_u64)) : undefined],
    ['Hex', h('span', { class: 'mono', id: 'state-hex' }, value.value_hex === '' ? '(empty)' : value.value_hex)],
    ['Size', formatBytes(value.value_hex.length / 2)]
  ])
}

// ---- every contract ----

async function gasPrice (): Promise<number | undefined> {
  return (await find<NetworkInfo>('/api/network-info').catch(() => undefined))?.gas_price
}

function gasFigure (price: number | undefined): HTMLElement {
  return figure('Gas price', price !== undefined ? `${formatCount(price)} µT` : '—', 'per 1,000 gas, now')
}

export async function contractsPage (view: View, beforeText?: string): Promise<Cleanup> {
  const before = cursorOf(beforeText)
  const [list, price] = await Promise.all([
    find<ContractList>(`/api/contracts?limit=${PAGE_SIZE}${before !== undefined ? `&before=${before}` : ''}`),
    gasPrice()
  ])
  if (!view.current()) return undefined
  if (list === undefined) {
    fill(view.main, notFound('This node serves no contracts.'))
    return undefined
  }
  const columns: Array<Column<ContractInfo>> = [
    { title: 'Contract', cell: (c) => link(`/contract/${c.contract_id}`, nameOf(c)) },
    { title: 'Id', class: 'wide', cell: (c) => h('span', { class: 'mono', title: c.contract_id }, shortId(c.contract_id)) },
    { title: 'Deployer', class: 'wide', cell: (c) => (c.deployer === '' ? genesis() : accountLink(c.deployer)) },
    { title: 'Height', class: 'num short', cell: (c) => heightLink(c.deployed_height) },
    { title: 'Methods', class: 'num short', cell: (c) => formatCount(c.methods.length) },
    { title: 'Balance', class: 'num amount', cell: (c) => formatAmount(c.balance_ut) }
  ]
  const gasBox = h('div', {}, gasFigure(price))
  fill(view.main,
    h('h1', {}, 'Contracts'),
    h('div', { class: 'figures' }, figure('Contracts', formatCount(list.total)), gasBox),
    card(undefined, h('div', { id: 'contracts' }, table(columns, list.contracts, 'No contracts deployed.')),
      pager('/contracts', before, list.contracts.length, list.total, list.next_cursor)))

  // the gas price moves with each block's contract work: read it again after blocks, at most once a second
  let timer: ReturnType<typeof setTimeout> | undefined
  const stop = view.live.listen(() => {
    if (timer !== undefined) return
    timer = setTimeout(() => {
      void gasPrice().then((fresh) => {
        timer = undefined
        if (fresh !== undefined && view.current()) fill(gasBox, gasFigure(fresh))
      })
    }, REFRESH_MS)
  })
  return () => { stop(); if (timer !== undefined) clearTimeout(timer) }
}

// ---- one contract ----

export async function contractPage (view: View, idText: string, beforeText?: string): Promise<Cleanup> {
  const id = idText.toLowerCase()
  const before = cursorOf(beforeText)
  const valid = CONTRACT_ID_RE.test(id)
  const [contract, logs] = valid
    ? await Promise.all([
      find<ContractInfo>(`/api/contracts/${id}`),
      find<ContractLogs>(`/api/contracts/${id}/logs?limit=${PAGE_SIZE}${before !== undefined ? `&before=${before}` : ''}`)
    ])
    : [undefined, undefined]
  if (!view.current()) return undefined
  if (contract === undefined) {
    fill(view.main, notFound(valid ? `No contract ${id} on this node.` : `${idText} is not a contract id (40 hex characters).`))
    return undefined
  }

  const keyInput = h('input', { id: 'state-key', name: 'key', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'State key, e.g. count', 'aria-label': 'State key', maxlength: '256' })
  const result = h('div', { id: 'state-result' })
  const lookup = h('form', { class: 'lookup', id: 'state-lookup' }, keyInput, h('button', { type: 'submit' }, 'Look up'))
  let asked = 0
  lookup.addEventListener('submit', (event) => {
    event.preventDefault()
    const key = keyInput.value
    if (key === '') return
    const seq = ++asked
    result.setAttribute('aria-busy', 'true')
    getJson<ContractValue>(`/api/contracts/${id}/state/${enc(key)}`)
      .then((value) => stateValue(value), (err: unknown) => h('p', { class: 'muted', 'data-state': 'error' }, `Could not read "${key}": ${err instanceof Error ? err.message : String(err)}`))
      .then((shown) => {
        if (seq !== asked || !view.current()) return
        fill(result, shown)
        result.setAttribute('aria-busy', 'false')
      }, () => {})
  })

  const logTxEnd = txEnds((logs?.logs ?? []).map((l) => l.tx_id))
  const logColumns: Array<Column<ContractLogs['logs'][number]>> = [
    { title: '#', class: 'num wide logseq', cell: (l) => formatCount(l.seq) },
    {
      title: 'Data',
      class: 'wrap',
      cell: (l) => {
        const text = readable(l.text)
        return text !== undefined ? h('span', { class: 'log-text' }, text) : h('span', { class: 'mono' }, l.data_hex === '' ? '(empty)' : l.data_hex)
      }
    },
    { title: 'Transaction', class: 'logtx', cell: (l) => txLink(l.tx_id, logTxEnd(l.tx_id)) },
    { title: 'Block', class: 'num logblock', cell: (l) => heightLink(l.height) }
  ]
  fill(view.main,
    h('h1', {}, contract.name, contract.version !== undefined ? h('span', { class: 'muted' }, ` ${contract.version}`) : null),
    card(undefined, kv([
      ['Id', h('span', { class: 'mono', id: 'contract-id' }, contract.contract_id)],
      ['Name', nameOf(contract)],
      ['Deployer', contract.deployer === '' ? genesis() : accountLink(contract.deployer, true)],
      ['Deployed', [heightLink(contract.deployed_height), contract.deployed_at > 0 ? ` · ${formatTime(contract.deployed_at * 1000)}` : '']],
      ['Deploy tx', contract.deploy_tx === '' ? genesis() : txLink(contract.deploy_tx)],
      ['Balance', h('span', { id: 'contract-balance', 'data-balance-ut': String(contract.balance_ut) }, formatAmount(contract.balance_ut))],
      ['Code hash', h('span', { class: 'mono' }, contract.code_hash)],
      ['Code size', formatBytes(contract.code_size)],
      ['Logs', formatCount(contract.log_count)]
    ])),
    card(`Methods (${contract.methods.length})`, contract.methods.length === 0
      ? h('p', { class: 'muted' }, 'No exported methods.')
      : h('div', { class: 'tags', id: 'methods' }, contract.methods.map((m) => h('span', { class: 'tag mono' }, m)))),
    card('State', h('p', { class: 'muted' }, 'Look up one key of the contract\'s storage.'), lookup, result),
    card('Logs', h('div', { id: 'logs' }, table(logColumns, logs?.logs ?? [], 'No logs.')),
      logs !== undefined ? pager(`/contract/${id}`, before, logs.logs.length, logs.total, logs.next_cursor) : null))
  return undefined
}
