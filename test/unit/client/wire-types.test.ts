/**
 * The wire types are written once, as the server's zod schemas, and the client and the explorer
 * use the types those schemas infer. At compile time: the client's and the explorer's types equal
 * the schemas' (a hand copy that drifts fails `tsc`). At run time: the client's publish requests
 * pass the server's request schema with nothing stripped, a real FeedService's answers pass the
 * response schemas strictly (no field the types do not know), the CREATE_POST the client builds
 * from the answer passes the chain's stateless check, and the compiled explorer modules import
 * nothing but each other (the schema imports are type-only and erased).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import type { z } from 'zod'
import { GenesisSchema, StateOverlay, applyTx, checkStateless, genesisState, type StateValue, type Transaction } from '../../../src/chain/index.js'
import {
  accountFrom, createPostTx, publishRequest, type ContractInfo as ClientContractInfo, type FeedPostItem as ClientFeedPostItem, type PublishRequest, type PublishResponse, type Timeline as ClientTimeline, type Trending as ClientTrending
} from '../../../src/client/index.js'
import { FeedService } from '../../../src/feed/index.js'
import type { TimelineSchema, TrendingSchema
} from '../../../src/feed/schemas.js';
import {
  AuthorFeedSchema, FeedPostItemSchema, PostBodySchema, PostStatsSchema, PublishRequestSchema, PublishResponseSchema
} from '../../../src/feed/schemas.js'
import type {
  AddressSummarySchema, AddressTxSchema, BlockSummarySchema, NetStatsSchema, NetworkInfoSchema, NodeVersionSchema, PeersSchema, TxDetailSchema,
  ValidatorsSchema
} from '../../../src/api/schemas.js'
import type {
  ContractInfoSchema, ContractListSchema, ContractLogsSchema, ContractStateValueSchema, WellKnownContractsSchema
} from '../../../src/api/routes/contracts.js'
import type { DevicesSchema, IdentitySchema } from '../../../src/api/routes/identity.js'
import type { LimitsSchema } from '../../../src/api/limits.js'
import type * as Explorer from '../../../src/explorer/browser/api.js'
import { aliceKey, ALICE, VALIDATOR } from '../../helpers/fixtures.js'

/** Compile-time assertions: `const _x: Expect<Equal<A, B>> = true` does not compile unless A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
type Expect<T extends true> = T
type Out<S extends z.ZodType> = z.output<S>

// ---- the client ----
export const clientTypes: [
  Expect<Equal<PublishRequest, Out<typeof PublishRequestSchema>>>,
  Expect<Equal<ReturnType<typeof publishRequest>, z.input<typeof PublishRequestSchema>>>,
  Expect<Equal<PublishResponse, Out<typeof PublishResponseSchema>>>,
  Expect<Equal<Parameters<typeof createPostTx>[1], Out<typeof PublishResponseSchema>>>,
  Expect<Equal<ClientFeedPostItem, Out<typeof FeedPostItemSchema>>>,
  Expect<Equal<ClientTimeline, Out<typeof TimelineSchema>>>,
  Expect<Equal<ClientTrending, Out<typeof TrendingSchema>>>,
  // the chain record plus what the API adds: the client sits below the API, so it cannot import the schema
  Expect<Equal<ClientContractInfo, Out<typeof ContractInfoSchema>>>
] = [true, true, true, true, true, true, true, true]

// ---- the explorer ----
export const explorerTypes: [
  Expect<Equal<Explorer.NetStats, Out<typeof NetStatsSchema>>>,
  Expect<Equal<Explorer.Block, Out<typeof BlockSummarySchema>>>,
  Expect<Equal<Explorer.TxDetail, Out<typeof TxDetailSchema>>>,
  Expect<Equal<Explorer.AddressTx, Out<typeof AddressTxSchema>>>,
  Expect<Equal<Explorer.AddressSummary, Out<typeof AddressSummarySchema>>>,
  Expect<Equal<Explorer.Identity, Out<typeof IdentitySchema>>>,
  Expect<Equal<Explorer.Devices, Out<typeof DevicesSchema>>>,
  Expect<Equal<Explorer.FeedItem, Out<typeof FeedPostItemSchema>>>,
  Expect<Equal<Explorer.PostBody, Out<typeof PostBodySchema>>>,
  Expect<Equal<Explorer.PostStats, Out<typeof PostStatsSchema>>>,
  Expect<Equal<Explorer.Validators, Out<typeof ValidatorsSchema>>>,
  Expect<Equal<Explorer.Peers, Out<typeof PeersSchema>>>,
  Expect<Equal<Explorer.NodeVersion, Out<typeof NodeVersionSchema>>>,
  Expect<Equal<Explorer.ContractInfo, Out<typeof ContractInfoSchema>>>,
  Expect<Equal<Explorer.ContractList, Out<typeof ContractListSchema>>>,
  Expect<Equal<Explorer.ContractValue, Out<typeof ContractStateValueSchema>>>,
  Expect<Equal<Explorer.ContractLogs, Out<typeof ContractLogsSchema>>>,
  Expect<Equal<Explorer.ContractLog, Out<typeof ContractLogsSchema>['logs'][number]>>,
  Expect<Equal<Explorer.WellKnownContracts, Out<typeof WellKnownContractsSchema>>>,
  Expect<Equal<Explorer.NetworkInfo, Out<typeof NetworkInfoSchema>>>,
  Expect<Equal<Explorer.Limits, Out<typeof LimitsSchema>>>,
  // a block summary is also what the block lists draw from the live stream
  Expect<Out<typeof BlockSummarySchema> extends Explorer.BlockEvent ? true : false>
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]

const alice = accountFrom(aliceKey)
const GENESIS = GenesisSchema.parse({
  chain_id: 'kith-test',
  genesis_time: '2026-01-01T00:00:00Z',
  validators: [{ pub_key: VALIDATOR, power: 1 }],
  alloc: [{ pub_key: ALICE, amount_ut: 100_000_000 }],
  relays: [{ pub_key: VALIDATOR, x25519_pub_key: 'c3'.repeat(32), fee_per_msg_ut: 0 }]
})

describe('client requests against the server\'s request schema', () => {
  const ts = 1_780_000_000
  const cases: Array<[string, Parameters<typeof publishRequest>[1]]> = [
    ['text only', { content: 'hello #kith', ts }],
    ['every field', {
      content: 'a photo', contentType: 'text/markdown', attachment: new Uint8Array([0xff, 0xd8, 0xff, 0xe0]), attachmentMime: 'image/jpeg',
      replyTo: 'ab'.repeat(16), quoteOf: 'cd'.repeat(16), postId: 'ef'.repeat(16), ts
    }],
    ['empty references', { content: 'x', replyTo: '', quoteOf: '', ts }]
  ]
  for (const [name, input] of cases) {
    test(`publishRequest (${name}) parses strictly and unchanged`, () => {
      const request = publishRequest(alice, input)
      assert.deepEqual(PublishRequestSchema.strict().parse(request), request)
    })
  }
})

describe('server answers against the schemas the client types come from', () => {
  let dir: string
  let feed: FeedService
  const nowMs = Date.parse('2026-05-01T12:00:00Z')
  const state = genesisState(GENESIS).state
  const chain = {
    state,
    scan: (prefix: string): Array<[string, StateValue]> =>
      [...state.data.entries()].filter(([key]) => key.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1))
  }
  const commit = (txs: Transaction[]): void => {
    const overlay = new StateOverlay(state)
    for (const tx of txs) applyTx(overlay, checkStateless(tx), { height: 1, time: nowMs, proposer: VALIDATOR, params: GENESIS.params })
    state.apply(overlay.writes)
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-wire-'))
    const scrubber = { async scrub (): Promise<never> { throw new Error('text only') } }
    feed = new FeedService({ dataDir: dir, chain, hostingRelay: VALIDATOR, scrubber, logger: pino({ level: 'silent' }), now: () => nowMs, sync: false })
    await feed.open()
  })

  after(async () => {
    await feed.stop()
    await rm(dir, { recursive: true, force: true })
  })

  test('publish → PublishResponse → CREATE_POST → the listing, the body and the stats all parse strictly', async () => {
    const request = publishRequest(alice, { content: 'wire types once #kith', ts: Math.floor(nowMs / 1000) })
    const answer: unknown = await feed.publish(request)
    const published = PublishResponseSchema.strict().parse(answer)
    assert.deepEqual(published, answer)

    const tx = createPostTx(alice, published, { time: nowMs })
    feed.checkSubmission(checkStateless(tx))
    commit([tx])
    await feed.applyBlock([tx])

    const page = feed.byAuthor(ALICE, { limit: 20 })
    const listing = AuthorFeedSchema.strict().parse(JSON.parse(`{"author":"${ALICE}","count":${page.count},"posts":${page.json()},"next_cursor":null}`))
    assert.equal(listing.posts.length, 1)
    const item = FeedPostItemSchema.strict().parse(listing.posts[0])
    assert.equal(item.post_id, request.post_id)
    assert.equal(item.size, published.size)
    assert.equal(item.hosting_relay, published.hosting_relay)

    const body = PostBodySchema.strict().parse(feed.post(request.post_id))
    assert.equal(body.content, request.content)
    assert.equal(body.content_hash, published.content_hash)
    PostStatsSchema.strict().parse(feed.stats(request.post_id, undefined))
    PostStatsSchema.strict().parse(feed.stats(request.post_id, ALICE))
  })
})

test('the compiled explorer modules import only each other: the schema types left no import behind', () => {
  const browser = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'explorer', 'browser')
  const modules = readdirSync(browser).filter((name) => name.endsWith('.js'))
  assert.ok(modules.includes('api.js'), `no compiled api.js in ${browser}`)
  for (const name of modules) {
    const source = readFileSync(join(browser, name), 'utf8')
    for (const match of source.matchAll(/(?:^|[;\s])(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/gm)) {
      const specifier = match[1] ?? match[2]
      assert.match(specifier, /^\.\/[\w-]+\.js$/, `${name} imports ${specifier}, which the page cannot load`)
    }
  }
})
