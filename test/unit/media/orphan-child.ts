/**
 * Child process of scrubber.test.ts: starts a MediaScrubber, scrubs one image (so its workers
 * are up), prints the workers' pids as a JSON line, then either waits to be killed (`wait`) or
 * simply reaches the end of the script without close() (`end`), which must let it exit.
 */
import { pino } from 'pino'
import sharp from 'sharp'
import { MediaScrubber, readMediaEnv } from '../../../src/media/index.js'

const mode = process.argv[2] ?? 'wait'
const scrubber = MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }), workers: 2 })
const image = await sharp({ create: { width: 64, height: 48, channels: 3, background: 'red' } }).jpeg().toBuffer()
await Promise.all([scrubber.scrub(image, 'image/jpeg'), scrubber.scrub(image, 'image/jpeg')])
process.stdout.write(JSON.stringify({ pids: scrubber.workerPids() }) + '\n')
if (mode === 'wait') setInterval(() => {}, 1000)
