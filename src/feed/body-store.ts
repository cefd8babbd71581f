/**
 * Post bodies on disk: an lmdb environment of its own (`<dataDir>/feed`) holding, per post id, a
 * small metadata record (what listings and restarts read), the text, and the scrubbed attachment
 * as raw bytes (served as they are). A body is written in one transaction and synced before
 * publish answers, so an acknowledged body survives kill -9. View counts live here too, written
 * without waiting for a sync: they are counters, not acknowledged writes.
 */
import { open, type Database, type RootDatabase } from 'lmdb'

export interface BodyMeta {
  author: string
  content_type: string
  hashtags: string[]
  /** the first PREVIEW_CHARS code points of the content */
  preview: string
  /** code points of the content */
  content_chars: number
  /** '' when the post has no attachment */
  attachment_mime: string
  attachment_bytes: number
  /** the spec's size: content bytes + stored attachment bytes + the metadata allowance */
  size: number
  /** hex sha256 of the stored bytes (content then attachment): what CREATE_POST commits to */
  content_hash: string
  /** hex sha256 of the bytes the author signed (content then the attachment before scrubbing) */
  raw_hash: string
  reply_to: string
  quote_of: string
  /** unix s, node clock, when publish stored it */
  published_at: number
  /** the version of the hashtag rule `hashtags` were extracted by (absent: before version 2) */
  hashtag_rule?: number
}

export interface StoredBody {
  content: string
  attachment: Buffer | undefined
}

export class FeedBodyStore {
  private readonly root: RootDatabase
  private readonly metas: Database<BodyMeta, string>
  private readonly contents: Database<string, string>
  private readonly attachments: Database<Buffer, string>
  private readonly viewCounts: Database<number, string>

  private constructor (path: string, sync: boolean) {
    this.root = open({ path, compression: false, noSync: !sync, mapSize: 2 ** 38 })
    this.metas = this.root.openDB({ name: 'meta' })
    this.contents = this.root.openDB({ name: 'content' })
    this.attachments = this.root.openDB({ name: 'attachment', encoding: 'binary' })
    this.viewCounts = this.root.openDB({ name: 'views' })
  }

  static open (path: string, opts: { sync?: boolean } = {}): FeedBodyStore {
    return new FeedBodyStore(path, opts.sync !== false)
  }

  meta (postId: string): BodyMeta | undefined {
    return this.metas.get(postId)
  }

  body (postId: string): StoredBody | undefined {
    const content = this.contents.get(postId)
    if (content === undefined) return undefined
    return { content, attachment: this.attachment(postId) }
  }

  attachment (postId: string): Buffer | undefined {
    return this.attachments.getBinary(postId) ?? undefined
  }

  /** Stores a body; resolves once it is synced to disk. */
  async put (postId: string, meta: BodyMeta, body: StoredBody): Promise<void> {
    await this.root.transaction(() => {
      this.metas.put(postId, meta)
      this.contents.put(postId, body.content)
      if (body.attachment !== undefined) this.attachments.put(postId, body.attachment)
    })
    await this.root.flushed
  }

  /** Rewrites metadata records (their bodies unchanged); resolves once synced. */
  async putMeta (records: ReadonlyArray<readonly [string, BodyMeta]>): Promise<void> {
    if (records.length === 0) return
    await this.root.transaction(() => {
      for (const [id, meta] of records) this.metas.put(id, meta)
    })
    await this.root.flushed
  }

  async remove (postIds: readonly string[]): Promise<void> {
    if (postIds.length === 0) return
    await this.root.transaction(() => {
      for (const id of postIds) {
        this.metas.remove(id)
        this.contents.remove(id)
        this.attachments.remove(id)
        this.viewCounts.remove(id)
      }
    })
  }

  * allMeta (): Generator<[string, BodyMeta]> {
    for (const { key, value } of this.metas.getRange()) yield [key, value]
  }

  views (postId: string): number {
    return this.viewCounts.get(postId) ?? 0
  }

  /** Records a view count; not awaited for a sync (lmdb batches these writes). */
  saveViews (postId: string, views: number): void {
    void this.viewCounts.put(postId, views)
  }

  * allViews (): Generator<[string, number]> {
    for (const { key, value } of this.viewCounts.getRange()) yield [key, value]
  }

  async close (): Promise<void> {
    await this.root.flushed
    await this.root.close()
  }
}
