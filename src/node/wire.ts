/**
 * Messages nodes exchange over gossip and request-response, with the schemas that check every
 * message from the network before anything acts on it. JSON on the wire.
 */
import { z } from 'zod'
import { BlockHeaderSchema, CommitSchema, HashSchema, TransactionSchema, plainTransaction, sameTx, type Block, type Commit, type Transaction } from '../chain/index.js'
import type { Proposal, Vote } from '../consensus/index.js'
import { decodeJson as decode, safeParse } from '../validation/index.js'

/** Parses and checks a network message; undefined when it is not valid JSON of that shape. */
export { decode }

const Hash = HashSchema
const Pubkey = z.string().regex(/^[0-9a-f]{64}$/)
const Height = z.number().int().min(0)
const Round = z.number().int().min(0).max(1_000_000)
const Sig = z.string().min(1).max(200)

/** The `tx` topic carries batches of 1 to 1,000 transactions (one gossip message per batch), each checked by decodeTxBatch. */
const TxBatchShellSchema = z.array(z.unknown()).min(1).max(1000)

/** A gossiped batch, each transaction checked as TransactionSchema checks it (the hand check first: plainTransaction); undefined when it is not one. */
export function decodeTxBatch (data: Uint8Array): Transaction[] | undefined {
  const raw = decode(TxBatchShellSchema, data)
  return raw === undefined ? undefined : checkedTxs(raw)
}

function parsedTransaction (raw: unknown): Transaction | undefined {
  const parsed = safeParse(TransactionSchema, raw)
  return parsed.success ? parsed.data : undefined
}

export const VoteSchema = z.object({
  type: z.enum(['prevote', 'precommit']),
  height: Height,
  round: Round,
  block_hash: Hash.nullable(),
  validator: Pubkey,
  signature: Sig
})

export { CommitSchema }

export const BlockSchema = z.object({
  header: BlockHeaderSchema,
  txs: z.array(TransactionSchema).max(100_000),
  last_commit: CommitSchema.nullable()
})

export const ProposalSchema = z.object({
  height: Height,
  round: Round,
  pol_round: z.number().int().min(-1),
  block: BlockSchema,
  block_hash: Hash,
  proposer: Pubkey,
  signature: Sig
})

/** A block whose transactions are checked one by one afterwards (checkedTxs). */
const BlockShellSchema = BlockSchema.extend({ txs: z.array(z.unknown()).max(100_000) })
/** A gossiped proposal before its transactions are checked (decodeProposal). */
const ProposalShellSchema = ProposalSchema.extend({ block: BlockShellSchema })

/**
 * Each of `raws` as TransactionSchema checks it, the hand check first (plainTransaction);
 * undefined if any fails. One `known` to this node, member for member, is taken as held: it
 * passed the same check when it was admitted.
 */
function checkedTxs (raws: readonly unknown[], known: (id: string) => Transaction | undefined = () => undefined): Transaction[] | undefined {
  const txs: Transaction[] = []
  for (const raw of raws) {
    const id = (raw as { id?: unknown } | null)?.id
    const held = typeof id === 'string' ? known(id) : undefined
    if (held !== undefined && sameTx(held, raw as Transaction)) {
      txs.push(held)
      continue
    }
    const tx = plainTransaction(raw) ?? parsedTransaction(raw)
    if (tx === undefined) return undefined
    txs.push(tx)
  }
  return txs
}

/**
 * Decodes a gossiped proposal, checking each transaction against TransactionSchema unless it is,
 * member for member, one this node already holds (`known`). Most of a proposal is usually known,
 * and checking a full block of 5,000 took ~35 ms of zod on every peer.
 */
export function decodeProposal (data: Uint8Array, known: (id: string) => Transaction | undefined): Proposal | undefined {
  const shell = decode(ProposalShellSchema, data)
  if (shell === undefined) return undefined
  const txs = checkedTxs(shell.block.txs, known)
  return txs === undefined ? undefined : { ...shell, block: { ...shell.block, txs } }
}

export const StatusSchema = z.object({
  peer_id: z.string().max(200),
  height: Height,
  round: Round,
  /** makes each announcement unique, so gossip's duplicate filter lets it through */
  at: z.number()
})
export type Status = z.output<typeof StatusSchema>

export const RequestSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('blocks'), from: z.number().int().min(1), count: z.number().int().min(1).max(100) }),
  z.object({
    type: z.literal('catchup'),
    height: Height,
    round: Round,
    /** keys (voteKey) of the votes, and rounds of the proposals, the asker already holds */
    have_votes: z.array(z.string().max(64)).max(10_000).default([]),
    have_proposals: z.array(Round).max(1000).default([])
  })
])
export type Request = z.output<typeof RequestSchema>

const BlocksResponseShellSchema = z.object({ blocks: z.array(z.object({ block: BlockShellSchema, hash: Hash, commit: CommitSchema })) })

/**
 * Decodes a block-sync answer (blocks with their certificates; up to 100 full blocks), each
 * transaction checked as TransactionSchema checks it, the hand check first; undefined when any
 * part is not of its shape.
 */
export function decodeBlocksResponse (data: Uint8Array): { blocks: SyncedBlock[] } | undefined {
  const shell = decode(BlocksResponseShellSchema, data)
  if (shell === undefined) return undefined
  const blocks: SyncedBlock[] = []
  for (const synced of shell.blocks) {
    const txs = checkedTxs(synced.block.txs)
    if (txs === undefined) return undefined
    blocks.push({ ...synced, block: { ...synced.block, txs } })
  }
  return { blocks }
}
export const CatchUpResponseSchema = z.object({ proposals: z.array(ProposalSchema), votes: z.array(VoteSchema) })

export interface SyncedBlock { block: Block, hash: string, commit: Commit }

/** A short key naming one vote, for "what I already have" lists. */
export function voteKey (v: Pick<Vote, 'round' | 'type' | 'validator' | 'block_hash'>): string {
  return `${v.round}${v.type === 'prevote' ? 'p' : 'c'}${v.validator.slice(0, 16)}${(v.block_hash ?? 'nil').slice(0, 12)}`
}

export function encode (value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value), 'utf8')
}


export type { Proposal, Vote }
