/**
 * `kith testnet`: one home per validator sharing one genesis, laid out on loopback as
 * decisions.md fixes it: node i serves HTTP on 127.0.0.1:(P+2i) and libp2p on
 * /ip4/127.0.0.1/tcp/(P+2i+1), and lists every other node as a peer.
 * With `compose`, the layout of docker/compose.yml instead: node i is the container (DNS name)
 * `node<i>`, each with its own address, so all listen on the same ports on every interface
 * (HTTP :8080, libp2p 4001) and name their peers /dns4/node<j>/tcp/4001.
 */
import { join, resolve } from 'node:path'
import { GenesisSchema, formatTimestamp, NEW_CHAIN_PARAMS } from '../chain/index.js'
import { generateKeyPair, seedOf, toHex } from '../crypto/index.js'
import { genesisRelayOf, initHome } from '../node/index.js'
import { parseOrThrow } from '../validation/index.js'

export interface TestnetOptions {
  validators: number
  output: string
  basePort: number
  chainId: string
  alloc: Array<{ pub_key: string, amount_ut: number }>
  /** extra config for every node (block interval, log level) */
  config?: Record<string, unknown>
  /** write the container layout of docker/compose.yml (basePort is then not used) */
  compose?: boolean
}

/** the ports of the image (docker/Dockerfile EXPOSE) in the compose layout */
export const COMPOSE_HTTP_PORT = 8080
export const COMPOSE_P2P_PORT = 4001

export interface TestnetNode {
  home: string
  httpPort: number
  p2pPort: number
  peerId: string
  multiaddr: string
  validatorPub: string
}

export async function createTestnet (opts: TestnetOptions): Promise<TestnetNode[]> {
  if (!Number.isInteger(opts.validators) || opts.validators < 1 || opts.validators > 100) throw new Error('--validators must be a whole number from 1 to 100')
  const members = await Promise.all(Array.from({ length: opts.validators }, async (_, i) => {
    const nodeKey = generateKeyPair()
    const validatorKey = generateKeyPair()
    // libp2p takes ~0.9 s to load: loaded when a testnet is written, not by every command
    const { peerIdFromSeed } = await import('../p2p/index.js')
    const peerId = await peerIdFromSeed(seedOf(nodeKey))
    if (opts.compose === true) {
      return {
        i, nodeKey, validatorKey, peerId, httpPort: COMPOSE_HTTP_PORT, p2pPort: COMPOSE_P2P_PORT,
        httpAddr: `0.0.0.0:${COMPOSE_HTTP_PORT}`, listen: `/ip4/0.0.0.0/tcp/${COMPOSE_P2P_PORT}`, multiaddr: `/dns4/node${i}/tcp/${COMPOSE_P2P_PORT}/p2p/${peerId}`
      }
    }
    const p2pPort = opts.basePort + 2 * i + 1
    return {
      i, nodeKey, validatorKey, peerId, httpPort: opts.basePort + 2 * i, p2pPort,
      httpAddr: `127.0.0.1:${opts.basePort + 2 * i}`, listen: `/ip4/127.0.0.1/tcp/${p2pPort}`, multiaddr: `/ip4/127.0.0.1/tcp/${p2pPort}/p2p/${peerId}`
    }
  }))
  const genesis = parseOrThrow(GenesisSchema, {
    chain_id: opts.chainId,
    genesis_time: formatTimestamp(Date.now()),
    params: NEW_CHAIN_PARAMS,
    validators: members.map((m) => ({ pub_key: toHex(m.validatorKey.publicKey), power: 1, name: `node${m.i}` })),
    alloc: opts.alloc,
    relays: members.map((m) => genesisRelayOf(m.nodeKey, m.validatorKey))
  }, 'CONFIG_INVALID', 'genesis')
  const out = resolve(opts.output)
  const nodes: TestnetNode[] = []
  for (const m of members) {
    const home = join(out, `node${m.i}`)
    await initHome(home, {
      genesis,
      nodeKey: m.nodeKey,
      validatorKey: m.validatorKey,
      config: {
        http_addr: m.httpAddr,
        p2p_listen: [m.listen],
        peers: members.filter((o) => o.i !== m.i).map((o) => o.multiaddr),
        ...opts.config
      }
    })
    nodes.push({ home, httpPort: m.httpPort, p2pPort: m.p2pPort, peerId: m.peerId, multiaddr: m.multiaddr, validatorPub: toHex(m.validatorKey.publicKey) })
  }
  return nodes
}
