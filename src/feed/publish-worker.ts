/**
 * Worker thread of PublishDecoder: decodes publish bodies (publish-decode.ts) and hands the
 * bytes back without copying them. The only module of this thread that listens on parentPort.
 */
import { parentPort } from 'node:worker_threads'
import { isKithError } from '../errors/index.js'
import { decodePublishBytes } from './publish-decode.js'
import { decodedForTransfer, type DecodeJob, type DecodeReply } from './publish-decoder.js'

parentPort?.on('message', ({ id, body }: DecodeJob) => {
  let reply: DecodeReply
  try {
    const { decoded, transfer } = decodedForTransfer(decodePublishBytes(body))
    reply = { id, decoded }
    parentPort?.postMessage(reply, transfer)
  } catch (err) {
    // a KithError is the request's fault (400); anything else a fault of this node (500)
    reply = isKithError(err) ? { id, refused: { code: err.code, message: err.message } } : { id, failed: String(err) }
    parentPort?.postMessage(reply)
  }
})
