/** Transactions, addresses and chain discovery under /api. */
import { addressOf, Contracts, formatAmount, resolveAccount } from '../../chain/index.js'
import { wellKnownContracts } from './contracts.js'
import { KithError } from '../../errors/index.js'
import type { ChainView, CommittedReads } from '../../node/index.js'
import { submitTxRoute } from './submit.js'
import { BUILD, NODE_VERSION, PROTOCOL_VERSION } from '../../release/index.js'
import { presentAddressTx, presentTx, isoTime } from '../present.js'
import { route, type AnyRoute } from '../route.js'
import {
  AddressParams, AddressQuery, AddressSummarySchema, BlockParams, BlockSummarySchema, ErrorSchema, NetStatsSchema, NetworkInfoSchema, NodeVersionSchema,
  PeersSchema, TxDetailSchema, TxIdParams, ValidatorsSchema
} from '../schemas.js'

/** Feature tags this node really serves today (spec, "Versioning"); more are added as they land. */
export const FEATURES = ['chain_id', 'feed_v2', 'identity_registry', 'media_scrub', 'onboarding_api', 'relay_broadcast', 'relay_mailbox', 'ws_submit_tx']

function stateHashAt (node: CommittedReads, height: number): { state_hash?: string } {
  const digest = node.blockSummary(height)?.state_hash
  return digest === undefined ? {} : { state_hash: digest }
}

/** On a pruned node an unknown id may be an old transaction: say from where it holds them. */
function prunedNote (node: CommittedReads): string {
  const earliest = node.earliestBlockBody()
  return earliest > 1 ? ` (this node keeps transactions from height ${earliest} on: --prune-keep-blocks)` : ''
}

/**
 * A transaction, an address, a block: served from committed blocks (and, on the core, the mempool
 * for a pending transaction); an HTTP edge thread gives them a view of its own (src/api/edge).
 */
export function chainReadRoutes (node: CommittedReads): AnyRoute[] {
  return [
    route({
      method: 'get',
      path: '/api/tx/{id}',
      tag: 'chain',
      summary: 'A transaction, pending or confirmed',
      params: TxIdParams,
      responses: { 200: { description: 'transaction detail', schema: TxDetailSchema }, 404: { description: 'unknown transaction', schema: ErrorSchema } },
      handler: ({ params }) => {
        const found = node.lookupTx(params.id)
        if (found === undefined) throw new KithError('NOT_FOUND', `unknown transaction ${params.id}${prunedNote(node)}`)
        return presentTx(found)
      }
    }),
    route({
      method: 'get',
      path: '/api/address/{pubkey}',
      tag: 'chain',
      summary: 'Balance and confirmed transactions of an account, newest first',
      params: AddressParams,
      query: AddressQuery,
      responses: { 200: { description: 'address summary', schema: AddressSummarySchema }, 400: { description: 'not a pubkey or address', schema: ErrorSchema } },
      handler: ({ params, query }) => {
        const pubkey = resolveAccount(params.pubkey)
        if (pubkey === undefined) throw new KithError('BAD_REQUEST', `${params.pubkey} is neither an Ed25519 pubkey (64 hex characters) nor a kith address`)
        const { items, count } = node.addressHistory(pubkey, query.limit)
        const balance = node.balance(pubkey)
        return {
          pub_key: pubkey,
          address: addressOf(pubkey),
          balance_ut: balance,
          balance: formatAmount(balance),
          transactions: items.map(presentAddressTx),
          tx_count: count,
          has_more: count > items.length
        }
      }
    }),
    route({
      method: 'get',
      path: '/api/blocks/{height}',
      tag: 'chain',
      summary: 'A committed block: header, transaction ids and the validators that certified it',
      params: BlockParams,
      responses: { 200: { description: 'block', schema: BlockSummarySchema }, 404: { description: 'no block at that height yet, or (on a pruned node) its transactions were dropped: the error names the earliest height held', schema: ErrorSchema } },
      handler: ({ params }) => {
        const height = params.height === 'latest' ? node.head().height : params.height
        // the ids, not the transactions: a block of 500 transfers costs 0.75 ms to decode
        const txIds = height >= 1 ? node.blockTxIds(height) : undefined
        const stored = txIds !== undefined ? node.blockHeader(height) : undefined
        if (txIds === undefined || stored === undefined) {
          const earliest = node.earliestBlockBody()
          if (height >= 1 && height < earliest) throw new KithError('NOT_FOUND', `block ${height} was pruned: this node keeps blocks from height ${earliest} on (--prune-keep-blocks)`)
          throw new KithError('NOT_FOUND', `no block at height ${String(params.height)}`)
        }
        const { header } = stored.block
        return {
          height,
          hash: stored.hash,
          time: isoTime(header.time),
          prev_hash: header.prev_hash,
          state_root: header.state_root,
          ...stateHashAt(node, height),
          tx_root: header.tx_root,
          proposer: header.proposer,
          tx_count: txIds.length,
          tx_ids: txIds,
          commit: stored.commit === null ? null : { round: stored.commit.round, signers: stored.commit.signatures.map((sig) => sig.validator) }
        }
      }
    })
  ]
}

export function chainRoutes (node: ChainView, nodeId: string): AnyRoute[] {
  const peers = (): Array<Record<string, unknown>> => node.peers().filter((p) => p.connected).map((p) => ({
    peer_id: p.peerId,
    ...(p.addrs[0] !== undefined ? { multiaddr: p.addrs[0] } : {}),
    ...(p.version !== undefined ? { version: p.version } : {}),
    ...(p.protocolVersion !== undefined ? { protocol_version: p.protocolVersion } : {}),
    ...(p.height !== undefined ? { height: p.height } : {})
  }))
  const validators = (): Array<Record<string, unknown>> => node.validators().map((v) => ({
    pub_key: v.pub_key, address: addressOf(v.pub_key), power: v.power, ...(v.name !== undefined ? { name: v.name } : {})
  }))
  return [
    submitTxRoute(async (tx) => await node.submitParsedTx(tx)),
    ...chainReadRoutes(node),
    route({
      method: 'get',
      path: '/api/netstats',
      tag: 'discovery',
      summary: 'Chain height, transaction count, supply and validators',
      responses: { 200: { description: 'network statistics', schema: NetStatsSchema } },
      handler: () => {
        const head = node.head()
        return {
          chain_id: node.genesis.chain_id,
          height: head.height,
          total_txs: node.totalTxs(),
          supply: node.supply(),
          validator_count: node.validators().length,
          mempool_size: node.mempoolSize(),
          last_block_time: isoTime(head.time),
          state_hash: node.stateHash()
        }
      }
    }),
    route({
      method: 'get',
      path: '/api/network-info',
      tag: 'discovery',
      summary: 'Chain id, genesis hash, peers, validators and well-known contracts',
      responses: { 200: { description: 'network information', schema: NetworkInfoSchema } },
      handler: () => ({
        chain_id: node.genesis.chain_id,
        genesis_hash: node.genesisHash,
        height: node.head().height,
        node_id: nodeId,
        peers: peers(),
        validators: validators(),
        contracts: wellKnownContracts(node.state),
        gas_price: Contracts.gasPrice(node.state)
      })
    }),
    route({
      method: 'get',
      path: '/api/validators',
      tag: 'discovery',
      summary: 'The active validator set',
      responses: { 200: { description: 'validator set', schema: ValidatorsSchema } },
      handler: () => {
        const list = validators()
        return { height: node.head().height, count: list.length, total_power: node.validators().reduce((s, v) => s + v.power, 0), validators: list }
      }
    }),
    route({
      method: 'get',
      path: '/api/peers',
      tag: 'discovery',
      summary: 'Connected peers with the version each announced',
      responses: { 200: { description: 'peers', schema: PeersSchema } },
      handler: () => {
        const list = peers()
        return { count: list.length, peers: list }
      }
    }),
    route({
      method: 'get',
      path: '/api/well-known-version',
      tag: 'discovery',
      summary: 'Node version, protocol version and feature tags',
      responses: { 200: { description: 'node version', schema: NodeVersionSchema } },
      handler: () => ({
        node_version: NODE_VERSION,
        protocol_version: PROTOCOL_VERSION,
        features: FEATURES,
        chain_id: node.genesis.chain_id,
        build: BUILD
      })
    })
  ]
}
