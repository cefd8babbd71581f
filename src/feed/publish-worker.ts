/**
 * Worker thread of PublishDecoder: decodes publish bodies (publish-decode.ts) and hands the
 * bytes back without copying them. The only module of this thread that listens on parentPort.
 */
import { parentPort } from 'node:worker_threads'
import { isKithError } from '../errors/index.js'
import { decodePublishBytes } from './publish-decode.js'
import { toTransfer, type DecodeJob, type DecodeReply } from './publish-decoder.js'

parentPort?.on('message', ({ id, body }: DecodeJob) => {
  let reply: DecodeReply
  try {
    const decoded = decodePublishBytes(body)
    const content = toTransfer(decoded.content)
    const attachment = decoded.attachment === undefined ? undefined : { bytes: toTransfer(decoded.attachment.bytes), mime: decoded.attachment.mime }
    reply = { id, decoded: { ...decoded, content, attachment } }
    parentPort?.postMessage(reply, attachment === undefined ? [content.buffer] : [content.buffer, attachment.bytes.buffer])
  } catch (err) {
    // a KithError is the request's fault (400); anything else a fault of this node (500)
    reply = isKithError(err) ? { id, refused: { code: err.code, message: err.message } } : { id, failed: String(err) }
    parentPort?.postMessage(reply)
  }
})
