/**
 * Worker thread of VerifyPool: verifies batches of Ed25519 signatures. Only a thread's entry
 * module may listen on parentPort: any module that another thread's code imports would take that
 * thread's messages too.
 */
import { parentPort } from 'node:worker_threads'
import { verifyPacked, type VerifyBatch } from './verify-batch.js'

parentPort?.on('message', ({ id, packed }: VerifyBatch) => {
  const results = verifyPacked(packed)
  parentPort?.postMessage({ id, results }, [results.buffer as ArrayBuffer])
})
