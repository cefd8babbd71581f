/**
 * The thread that takes the node's snapshots, off its event loop. It waits for a job; for each, it
 * opens a read-only view of the node's store, says "pinned" once the view holds the job's height
 * (the node holds its next commit until then, so every node takes the same snapshot at the same
 * height), then writes the file and says "done". It lives as long as the node, so a snapshot
 * height costs the commit path only the opening of a read transaction, not a thread's start.
 */
import { parentPort } from 'node:worker_threads'
import { StoreSnapshotReader } from '../storage/index.js'
import { writeSnapshot } from './file.js'

export interface SnapshotJob { dataDir: string, file: string, height: number, chunkBytes: number }
export type SnapshotWorkerMessage =
  | { kind: 'pinned' }
  | { kind: 'done', bytes: number, entries: number, chunks: number }
  | { kind: 'failed', message: string }

const port = parentPort
if (port === null) throw new Error('snapshot worker: run as a worker thread')
const post = (message: SnapshotWorkerMessage): void => { port.postMessage(message) }

async function take (job: SnapshotJob): Promise<void> {
  let reader: StoreSnapshotReader | undefined
  try {
    reader = StoreSnapshotReader.open(job.dataDir)
    const head = reader.head().height
    if (head !== job.height) throw new Error(`the store's head is ${head}, not ${job.height}`)
    post({ kind: 'pinned' })
    const summary = await writeSnapshot(reader, job.file, job.chunkBytes)
    post({ kind: 'done', bytes: summary.bytes, entries: summary.entries, chunks: summary.chunks })
  } catch (err) {
    post({ kind: 'failed', message: err instanceof Error ? err.message : String(err) })
  } finally {
    await reader?.close()
  }
}

// one job at a time: the node sends the next only after "done" or "failed"
port.on('message', (job: SnapshotJob) => { void take(job) })
