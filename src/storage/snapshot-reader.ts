/**
 * A consistent view of a chain store for a snapshot: its head, the head's block and every state
 * entry, all read in one lmdb read transaction. Opened read-only, so it can read the store of a
 * running node (an lmdb reader never blocks the writer, in this process or another); the writer
 * keeps the pages this view reads until it closes, so a long read grows the file meanwhile.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Database, type RootDatabase, type Transaction as ReadTransaction } from 'lmdb'
import type { StateValue } from '../chain/index.js'
import type { ChainHead, StoredHeader } from './types.js'
import { CHAIN_DBS } from './names.js'

export class StoreSnapshotReader {
  private readonly txn: ReadTransaction
  private readonly meta: Database<unknown, string>
  private readonly state: Database<StateValue, string>
  private readonly blocks: Database<StoredHeader, number>

  private constructor (private readonly root: RootDatabase) {
    this.meta = root.openDB({ name: CHAIN_DBS.meta })
    this.state = root.openDB({ name: CHAIN_DBS.state })
    this.blocks = root.openDB({ name: CHAIN_DBS.blocks })
    this.txn = root.useReadTransaction()
  }

  /** The store in `dataDir` (a node home's data directory). */
  static open (dataDir: string): StoreSnapshotReader {
    if (!existsSync(join(dataDir, 'data.mdb'))) throw new Error(`${dataDir} holds no chain store (no data.mdb)`)
    return new StoreSnapshotReader(open({ path: dataDir, readOnly: true, compression: false }))
  }

  private metaValue<T> (key: string): T {
    const value = this.meta.get(key, { transaction: this.txn }) as T | undefined
    if (value === undefined) throw new Error(`the store has no ${key}: it was never initialised`)
    return value
  }

  head (): ChainHead {
    return this.metaValue<ChainHead>('head')
  }

  chainId (): string {
    return this.metaValue<string>('chain_id')
  }

  genesisHash (): string {
    return this.metaValue<string>('genesis_hash')
  }

  /** A block's header and the certificate that committed it. */
  header (height: number): StoredHeader | undefined {
    return this.blocks.get(height, { transaction: this.txn })
  }

  get (key: string): StateValue | undefined {
    return this.state.get(key, { transaction: this.txn })
  }

  /** Every state entry, in key order. */
  * entries (): Generator<[string, StateValue]> {
    for (const { key, value } of this.state.getRange({ transaction: this.txn })) yield [key, value]
  }

  async close (): Promise<void> {
    this.txn.done()
    await this.root.close()
  }
}
