/**
 * PublishDecoder over real worker threads: a body decoded on a worker gives what the inline
 * decode gives (bytes, hash, signature verdict, refusals), the body's memory is handed over, not
 * copied, and the bound on waiting bodies refuses with MEDIA_BUSY instead of queueing without end.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { accountFrom, publishRequest } from '../../../src/client/index.js'
import { KithError } from '../../../src/errors/index.js'
import { PublishDecoder } from '../../../src/feed/index.js'
import { decodePublishBytes } from '../../../src/feed/publish-decode.js'
import { aliceKey } from '../../helpers/fixtures.js'

const alice = accountFrom(aliceKey)

function body (value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8')
}

describe('PublishDecoder', () => {
  const decoder = new PublishDecoder({ workers: 2, inlineMaxBytes: 0, maxWaitingPerWorker: 2 })
  after(async () => { await decoder.stop() })
  const attachment = randomBytes(200_000)
  const request = publishRequest(alice, { content: 'a photo #one', attachment, attachmentMime: 'IMAGE/JPEG' })

  test('a body decoded on a worker equals the inline decode, and its buffer is handed over', async () => {
    const sent = body(request)
    const inline = decodePublishBytes(body(request))
    const decoded = await decoder.decode(sent)
    assert.equal(sent.length, 0, 'the body\'s memory went to the worker (transferred, not copied)')
    assert.ok(Buffer.isBuffer(decoded.content) && Buffer.isBuffer(decoded.attachment?.bytes))
    assert.deepEqual(decoded, inline)
    assert.equal(decoded.signatureValid, true)
    assert.ok(decoded.attachment?.bytes.equals(attachment))
    assert.equal(decoded.attachment?.mime, 'image/jpeg')
    assert.equal('attachment_b64' in decoded.req, false)
  })

  test('faults come back as the inline decode reports them', async () => {
    const forged = await decoder.decode(body({ ...request, content: 'another text' }))
    assert.equal(forged.signatureValid, false)
    const badBase64 = await decoder.decode(body({ ...request, attachment_b64: `${request.attachment_b64 ?? ''}A` }))
    assert.equal(badBase64.attachmentError, 'attachment_b64: must be standard padded base64')
    assert.equal(badBase64.signatureValid, false)
    for (const [bytes, message] of [
      [Buffer.from('{"post_id":', 'utf8'), 'request body is not valid JSON'],
      [body({ ...request, ts: 'soon' }), 'ts: '],
      [body([1, 2, 3]), 'expected object']
    ] as const) {
      await assert.rejects(decoder.decode(Buffer.from(bytes)), (err: unknown) => {
        assert.ok(err instanceof KithError, String(err))
        assert.equal(err.code, 'BAD_REQUEST')
        assert.ok(err.message.includes(message), err.message)
        return true
      })
    }
  })

  test('hostile bodies on a worker: deep nesting and megabytes of tiny members are refused (400), and the worker goes on', async () => {
    const deep = Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`, 'utf8')
    const wide = Buffer.from(`{"post_id":[${'{},'.repeat(1_000_000)}{}]}`, 'utf8')
    for (const bytes of [deep, wide]) {
      await assert.rejects(decoder.decode(bytes), (err: unknown) => err instanceof KithError && err.code === 'BAD_REQUEST')
    }
    assert.equal((await decoder.decode(body(request))).signatureValid, true)
  })

  test('past the bound on waiting bodies: MEDIA_BUSY at once, and the ones taken still decode', async () => {
    const large = body(request)
    const attempts = Array.from({ length: 8 }, async () => await decoder.decode(Buffer.from(large)))
    const results = await Promise.allSettled(attempts)
    const decoded = results.filter((r) => r.status === 'fulfilled')
    const busy = results.filter((r) => r.status === 'rejected' && r.reason instanceof KithError && r.reason.code === 'MEDIA_BUSY')
    assert.equal(decoded.length, 4, 'two workers, two waiting each')
    assert.equal(busy.length, 4)
    // the bound frees as answers come back
    assert.equal((await decoder.decode(Buffer.from(large))).signatureValid, true)
  })

  test('a worker that dies fails what it held (500, not a refusal) and is replaced', async () => {
    const own = new PublishDecoder({ workers: 1, inlineMaxBytes: 0, maxWaitingPerWorker: 4 })
    try {
      // reaching into the pool: nothing outside can kill its thread, a crash would
      const slots = (own as unknown as { slots: Array<{ worker: { terminate: () => Promise<number> } }> }).slots
      const held = own.decode(body(request))
      await slots[0].worker.terminate()
      await assert.rejects(held, (err: unknown) => err instanceof KithError && err.code === 'INTERNAL')
      const again = await own.decode(body(request))
      assert.equal(again.signatureValid, true, 'the replacement decodes')
    } finally {
      await own.stop()
    }
  })

  test('small bodies are decoded inline, without a worker', async () => {
    const inlineOnly = new PublishDecoder({ workers: 0 })
    const small = body(publishRequest(alice, { content: 'hello' }))
    const decoded = await inlineOnly.decode(small)
    assert.equal(small.length > 0, true, 'an inline decode leaves the buffer alone')
    assert.equal(decoded.signatureValid, true)
    await inlineOnly.stop()
  })
})
