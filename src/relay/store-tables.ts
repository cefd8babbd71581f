/**
 * The mailbox store's lmdb environment (`<dataDir>/relay`): which tables it has, which mailbox
 * table is current, and the one-off move of a format-1 store into the log. Apart from store.ts
 * so that the on-disk side of the store (tables, format, the key removals every table takes) is
 * read in one place; what is in memory lives in store-state.ts.
 */
import { open, type Database, type RootDatabase } from 'lmdb'
import type { DeleteProof, Envelope } from './envelope.js'
import { envelopeKey, tombstoneKey, type EnvelopeKeys } from './store-keys.js'
import { valueText } from './store-values.js'

const FORMAT = 3

export type Table = Database<Buffer, Buffer>

export class StoreTables {
  readonly root: RootDatabase
  /** the log of stores written before 2026-11-22 (lmdb name `envelopes`): read, and emptied by the next merge */
  readonly log: Table
  /** mailboxes-0 and mailboxes-1: one is current, the other empty or being written by a merge */
  readonly mailboxTables: [Table, Table]
  current: 0 | 1
  readonly meta: Database<number, string>
  readonly tombstones: Database<DeleteProof, Buffer>
  /** the table a merge is writing: deletes and expiry reach it too */
  target: Table | undefined

  /** Opens the tables (moving a format-1 store into the log first) and picks the current mailbox table. */
  constructor (path: string, sync: boolean) {
    this.root = open({ path, compression: false, noSync: !sync, mapSize: 2 ** 36 })
    this.log = this.root.openDB({ name: 'envelopes', keyEncoding: 'binary', encoding: 'binary' })
    this.mailboxTables = [0, 1].map((n) => this.root.openDB<Buffer, Buffer>({ name: `mailboxes-${n}`, keyEncoding: 'binary', encoding: 'binary' })) as [Table, Table]
    this.tombstones = this.root.openDB({ name: 'tombstones', keyEncoding: 'binary' })
    this.meta = this.root.openDB<number, string>({ name: 'meta' })
    this.migrateFormat1()
    // (a merge that did not finish leaves the other table partly written: the next merge empties it)
    this.current = this.meta.get('merged') === 1 ? 1 : 0
  }

  get mailboxTable (): Table {
    return this.mailboxTables[this.current]
  }

  /** The first journal segment not merged into the mailbox table (the ones below it may be recycled). */
  get journalFrom (): number {
    return Number(this.meta.get('journalFrom') ?? 0)
  }

  /**
   * In an lmdb batch: an envelope out of every table that may hold it (a merge may be copying it,
   * or have copied it before its mark became `merged`). A journaled envelope was never in the log.
   */
  removeKeys (keys: EnvelopeKeys): void {
    if (keys.segment < 0) this.log.remove(keys.log)
    this.mailboxTable.remove(keys.merged)
    this.target?.remove(keys.merged)
  }

  async close (): Promise<void> {
    await this.root.flushed
    await this.root.close()
  }

  /** Moves a format-1 store (tables keyed by mailbox: mailbox, ids, time, counts, sender_counts, buckets) into the log, once. */
  private migrateFormat1 (): void {
    const meta = this.meta
    // format 2 is format 3 with nothing merged yet
    if (meta.get('format') === FORMAT) return
    if (meta.get('format') === 2) {
      meta.putSync('format', FORMAT)
      return
    }
    const oldMailbox = this.root.openDB<Envelope, [string, number, string]>({ name: 'mailbox' })
    const oldIds = this.root.openDB<{ recipient_pub: string, sent_at: number, deleted?: DeleteProof }, string>({ name: 'ids' })
    const oldTables = ['time', 'counts', 'sender_counts', 'buckets'].map((name) => this.root.openDB({ name }))
    this.root.transactionSync(() => {
      for (const { value: env } of oldMailbox.getRange()) {
        this.log.putSync(envelopeKey(env.sent_at, env.id, env.recipient_pub, env.sender_pub), Buffer.from(valueText(env), 'latin1'))
      }
      for (const { key: id, value } of oldIds.getRange()) {
        if (value.deleted !== undefined) this.tombstones.putSync(tombstoneKey(value.sent_at, id), { ...value.deleted, sent_at: value.sent_at })
      }
      for (const table of [oldMailbox, oldIds, ...oldTables]) table.dropSync()
      meta.putSync('format', FORMAT)
    })
  }
}
