/**
 * The mailbox store's merge: the journal (and the old log of stores written before 2026-11-22)
 * copied, in the background, into a table in mailbox order, so that an inbox page reads
 * neighbouring keys (an LSM tree of two levels; store.ts's header and docs/relay.md say why).
 * Apart from store.ts because it is the store's one long-running task: it works a few
 * milliseconds per event-loop turn, may be joined or stopped by close, and must leave the store
 * readable at every turn and after a crash at any point.
 */
import { IN_JOURNAL, IN_TABLE } from './mailbox-index.js'
import { mergedKeyAt } from './store-keys.js'
import type { StoreState } from './store-state.js'
import type { Table } from './store-tables.js'

/** The journal (and the log) are merged once they hold this many envelopes and half as many as the mailbox table. */
const MERGE_MIN = 20_000
/** A merge copies whole mailboxes for this long per event-loop turn (reads from the journal or the old log are at random places) */
const MERGE_TURN_MS = 5
/** and switches, or removes in one transaction, this many envelopes at a time. */
const MERGE_TURN = 2_000

export interface MergeOptions {
  /** merge the journal into the mailbox table by itself (default true; see `merge`) */
  autoMerge?: boolean
  /** the journal's size that starts a merge (default MERGE_MIN) */
  mergeMin?: number
  /** told how each merge ended (for the operator's log) */
  onMerged?: (outcome: { envelopes: number, ms: number } | { error: unknown }) => void
}

/** An async put with MDB_APPEND: lmdb's write.js takes put's options form, its typings only putSync's. */
async function appendPut (db: Table, key: Buffer, value: Buffer): Promise<boolean> {
  return await (db.put as unknown as (k: Buffer, v: Buffer, o: { append: true }) => Promise<boolean>).call(db, key, value, { append: true })
}

const nextTurn = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve))

export class MailboxMerge {
  private running: Promise<void> | undefined
  private readonly autoMerge: boolean
  private readonly mergeMin: number
  private readonly onMerged: MergeOptions['onMerged']

  constructor (private readonly state: StoreState, opts: MergeOptions) {
    this.autoMerge = opts.autoMerge ?? true
    this.mergeMin = opts.mergeMin ?? MERGE_MIN
    this.onMerged = opts.onMerged
  }

  /** Starts a merge once the journal (and lmdb's log) hold mergeMin envelopes and half as many as the mailbox table. */
  startWhenDue (): void {
    const state = this.state
    if (!this.autoMerge || state.closing || this.running !== undefined) return
    const unmerged = state.ids.size - state.mergedCount
    if (unmerged >= this.mergeMin && unmerged >= state.mergedCount / 2) this.merge().catch(() => {})
  }

  /** Settles once no merge is running (one that is running stops at its next turn once the store is closing). */
  async stopped (): Promise<void> {
    await this.running?.catch(() => {})
  }

  /**
   * Merges the journal (and an old log) into the mailbox table (see the header): the journal
   * starts a new segment, and every live envelope of the earlier ones, of the mailbox table and
   * of the log is appended, in mailbox order, to the other mailbox table; the store switches to
   * it (recording the first segment not merged in the same commit), then recycles the merged
   * segments, empties the old table and drops the merged keys from the log. Envelopes stored
   * meanwhile stay in the journal; deletes and expiry meanwhile reach the new table too. Runs a
   * turn at a time (MERGE_TURN_MS of copying or switching, MERGE_TURN keys per removal); a crash
   * or close at any point loses nothing (the next open ignores a half-written table, which the
   * next merge empties first; recycles the segments below `journalFrom`; and drops the log's
   * keys that the mailbox table also holds). Resolves when it is done; joins a merge already
   * running.
   */
  async merge (): Promise<void> {
    const started = Date.now()
    this.running ??= this.run().then(
      () => { if (!this.state.closing) this.onMerged?.({ envelopes: this.state.mergedCount, ms: Date.now() - started }) },
      (error: unknown) => { this.onMerged?.({ error }); throw error }
    ).finally(() => { this.running = undefined })
    await this.running
  }

  private async run (): Promise<void> {
    const state = this.state
    const tables = state.tables
    const target = tables.mailboxTables[1 - tables.current]
    await this.removeWhere(target, () => true)
    // the merge takes the journal's segments below `cutoff`; envelopes answered from here on lie in later ones
    const cutoff = await state.journal.cut()
    // (answered envelopes are indexed in a microtask after their answer: all of them by the next turn)
    await nextTurn()
    tables.target = target
    // hex order is byte order: the keys come in ascending order, as appends need
    const pubs = [...state.mailboxPubs].sort()
    // an append out of key order is refused (resolves false), and its envelope would be lost
    let refused = 0
    const checkAppend = (ok: boolean): void => { if (!ok) refused++ }
    try {
      let written: Promise<unknown> = Promise.resolve()
      const liveFrom = state.liveFrom()
      for (let p = 0; p < pubs.length;) {
        // whole mailboxes per turn: their entries cannot shift under the copy
        for (const turnEnd = performance.now() + MERGE_TURN_MS; p < pubs.length && performance.now() < turnEnd; p++) {
          const box = state.mailbox(pubs[p])
          if (box === undefined) continue
          for (let i = box.lowerBound(liveFrom); i < box.length; i++) {
            const merged = box.place(i) === IN_TABLE
            // journaled since the merge began: it stays in the journal
            if (box.place(i) === IN_JOURNAL && box.journalSegment(i) >= cutoff) continue
            const value = state.storedCopy(box, i)
            if (value === undefined) continue
            written = appendPut(target, mergedKeyAt(box, i), value).then(checkAppend)
            // the mark moves with the entry as its mailbox changes, and goes with it when deleted
            if (!merged) box.markCopied(i)
          }
        }
        // the table is left part-written: the next merge empties it first
        if (state.closing) return
        await nextTurn()
      }
      await written
      await tables.root.flushed
      if (refused > 0) throw new Error(`the merge stopped: lmdb refused ${refused} appends as out of key order (the store keeps reading the tables it had)`)
      if (state.closing) return
      // one commit: the new table, and the journal segments it took
      await tables.root.batch(() => {
        tables.meta.put('merged', 1 - tables.current)
        tables.meta.put('journalFrom', cutoff)
      })
      await tables.root.flushed
    } finally {
      tables.target = undefined
    }
    const old = tables.mailboxTable
    // the new table holds every merged envelope, and the log and journal still hold the others, copied ones included
    tables.current = tables.current === 0 ? 1 : 0
    for (let p = 0; p < pubs.length;) {
      for (const turnEnd = performance.now() + MERGE_TURN_MS; p < pubs.length && performance.now() < turnEnd; p++) {
        state.mergedCount += state.mailbox(pubs[p])?.promoteCopied() ?? 0
      }
      // (once closing, the copied marks read as the journal until the next open, which recycles the segments taken)
      if (state.closing) return
      await nextTurn()
    }
    state.releaseEmptySegments(cutoff)
    await this.removeWhere(old, () => true)
    // the log's keys of envelopes the mailbox table now holds
    await this.removeWhere(tables.log, (key) => {
      const found = state.findByLogKey(key)
      return found !== undefined && found.box.place(found.index) === IN_TABLE
    })
  }

  /**
   * Removes the keys of `db` that `doomed` picks, in key order, one transaction per chunk, each
   * synced before the next. Not one transaction for all: lmdb records the pages a transaction
   * frees as one entry of its free list, and every later commit that takes pages from a huge
   * entry loads it whole and writes the rest back. After a merge had emptied a million-entry
   * table in one transaction, broadcasts cost the node ~10 µs more CPU each (docs/relay.md).
   */
  private async removeWhere (db: Table, doomed: (key: Buffer) => boolean): Promise<void> {
    const chunk = MERGE_TURN
    let start: Buffer | undefined
    for (;;) {
      const keys = [...db.getKeys({ start, limit: chunk })].map((k) => Buffer.from(k))
      let removed: Promise<unknown> | undefined
      for (const key of keys) {
        if (start !== undefined && key.equals(start)) continue
        if (doomed(key)) removed = db.remove(key)
      }
      await (removed ?? nextTurn())
      if (keys.length < chunk || this.state.closing) return
      start = keys[keys.length - 1]
    }
  }
}
