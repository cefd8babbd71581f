/**
 * `kith snapshot export FILE` and `kith snapshot import FILE`: backups of a node's state
 * (src/snapshot, docs/operating.md "Backups: snapshots"). Export reads a consistent view of the
 * store, so the node may keep running; import fills a new home, which then follows the chain
 * from the snapshot's height by block sync.
 */
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { loadHome } from '../node/index.js'
import { exportSnapshot, importSnapshot } from '../snapshot/index.js'

const HEX_HASH = /^[0-9a-f]{64}$/

export function registerSnapshotCommands (program: Command): void {
  const snapshot = program.command('snapshot').description('back up a node\'s state to a file, or start a new home from one')
  snapshot.command('export')
    .description('write the state at the head to FILE (the node may keep running)')
    .argument('<file>', 'the snapshot file to write')
    .requiredOption('--home <dir>', 'the node\'s home directory')
    .action(async (file: string, opts: { home: string }) => {
      const home = await loadHome(resolve(opts.home))
      console.log(JSON.stringify(await exportSnapshot(home.dataDir, resolve(file)), null, 2))
    })
  snapshot.command('import')
    .description('fill a new home (kith init --genesis) from FILE, checked against the validators\' signatures; then start it')
    .argument('<file>', 'a file written by kith snapshot export')
    .requiredOption('--home <dir>', 'a home with this chain\'s genesis and no chain data yet')
    .option('--trust-hash <hash>', 'the block hash at the snapshot\'s height, from a node you trust: needed once the validator set has changed since genesis')
    .action(async (file: string, opts: { home: string, trustHash?: string }) => {
      if (opts.trustHash !== undefined && !HEX_HASH.test(opts.trustHash)) throw new Error(`--trust-hash expects a block hash (64 lowercase hex characters), got "${opts.trustHash}"`)
      const home = await loadHome(resolve(opts.home))
      const summary = await importSnapshot(resolve(file), home.dataDir, home.genesis, opts.trustHash !== undefined ? { trustHash: opts.trustHash } : {})
      console.log(JSON.stringify(summary, null, 2))
    })
}
