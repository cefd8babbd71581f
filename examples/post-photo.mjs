// Publishing a post with a photo, then committing it: node examples/post-photo.mjs holiday.jpg
import { readFileSync } from 'node:fs'
import { createPostTx, publishRequest } from '../dist/src/client/index.js'
import { client, me } from './dev-account.mjs'

const photoFile = process.argv[2]
if (photoFile === undefined) throw new Error('usage: node examples/post-photo.mjs PHOTO.jpg')
const photo = readFileSync(photoFile)
const published = await client.request('POST', '/feed/publish',
  publishRequest(me, { content: 'Back home #travel', attachment: photo, attachmentMime: 'image/jpeg' }))
await client.submitAndWait(createPostTx(me, published))  // fee: published.estimated_fee_ut
const { attachment, ...post } = await client.request('GET', `/feed/post/${published.post_id}`)
console.log(post, `attachment: ${attachment.length} characters of base64`)  // the scrubbed JPEG
console.log(await client.request('GET', '/feed/hashtag/travel'))
