/**
 * The social feed commands of `kith`: post publish, follow, like, timeline, trending. A post is
 * published to the node (POST /feed/publish), then its CREATE_POST is submitted and waited for
 * (docs/feed.md, "Life of a post"). Reference: docs/cli.md.
 */
import { readFile } from 'node:fs/promises'
import { extname, resolve as resolvePath } from 'node:path'
import type { Command } from 'commander'
import { ApiError, createPostTx, followTx, postActionTx, publishRequest, type FeedPostItem } from '../../client/index.js'
import { run, withGlobals, type Context } from './context.js'
import { CliError } from './errors.js'

const POST_ID_RE = /^[0-9a-f]{32}$/
const MAX_WINDOW_HOURS = 168

/** Attachment types the node accepts (src/media/magic.ts), by file extension. */
export const ATTACHMENT_TYPES: Readonly<Record<string, string>> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.ogv': 'video/ogg',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.opus': 'audio/opus',
  '.m4a': 'audio/mp4'
}

export async function readAttachment (file: string): Promise<{ bytes: Uint8Array, mime: string }> {
  const path = resolvePath(file)
  const mime = ATTACHMENT_TYPES[extname(path).toLowerCase()]
  if (mime === undefined) {
    throw new CliError('BAD_ATTACHMENT', `cannot tell the type of attachment ${path} from its extension; use one of ${Object.keys(ATTACHMENT_TYPES).join(' ')}`)
  }
  try {
    return { bytes: await readFile(path), mime }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new CliError('BAD_ATTACHMENT', `attachment ${path} does not exist; check the path given to --attach`)
    if (code === 'EISDIR') throw new CliError('BAD_ATTACHMENT', `attachment ${path} is a directory; give a file to --attach`)
    throw new CliError('BAD_ATTACHMENT', `cannot read attachment ${path} (${code ?? (err as Error).message})`)
  }
}

export function checkPostId (postId: string): string {
  if (!POST_ID_RE.test(postId)) throw new CliError('BAD_POST_ID', `"${postId}" is not a post id (32 lowercase hex); \`kith timeline\` and \`kith trending\` show post ids`)
  return postId
}

/** A whole number from an option, within [min, max]. */
export function parseCount (text: unknown, what: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  if (!Number.isInteger(value) || value < min || value > max) throw new CliError('BAD_NUMBER', `${what} must be a whole number from ${min} to ${max}, got "${String(text)}"`)
  return value
}

/** Readable lines for a listing: id, author (by keystore name when local), time, likes, views, text. */
async function showPosts (ctx: Context, posts: FeedPostItem[], empty: string): Promise<string[]> {
  if (posts.length === 0) return [empty]
  const names = new Map((await ctx.keystore.list()).map((k) => [k.pub_key, k.name]))
  const lines: string[] = []
  for (const p of posts) {
    const author = names.get(p.author) ?? `${p.author.slice(0, 16)}…`
    const when = new Date(p.created_at * 1000).toISOString().replace('.000Z', 'Z')
    lines.push(`${p.post_id}  ${author}  ${when}  ${p.likes} like${p.likes === 1 ? '' : 's'}, ${p.views} view${p.views === 1 ? '' : 's'}`)
    const text = p.body_available ? `${p.content_preview}${p.content_truncated ? '…' : ''}` : `[body on ${p.hosting_relay}]`
    lines.push(`  ${text}${p.has_attachment ? ` [${p.attachment_mime} attached]` : ''}`)
  }
  return lines
}

export function registerFeedCommands (program: Command): void {
  const post = program.command('post').description('posts of the social feed: bodies on the node, metadata on the chain')
  withGlobals(post.command('publish').argument('<text>', 'the post text (#hashtags are indexed)').description('publish the body to the node, then submit its CREATE_POST and wait for the block'))
    .option('--attach <file>', `an image, video or audio file (${Object.keys(ATTACHMENT_TYPES).join(' ')}); the node strips its metadata`)
    .action(run(async (ctx, [text], opts) => {
      const attachment = typeof opts.attach === 'string' ? await readAttachment(opts.attach) : undefined
      const key = await ctx.unlock()
      const request = publishRequest(key.account, { content: text, ...(attachment !== undefined ? { attachment: attachment.bytes, attachmentMime: attachment.mime } : {}) })
      const published = await ctx.refusable(`publish of post ${request.post_id}`, async (c) => await c.publish(request))
      ctx.progress(`published post ${published.post_id} to ${ctx.nodeUrl}: ${published.size} bytes, fee ${published.estimated_fee_ut} µT`)
      const tx = createPostTx(key.account, published)
      const detail = await ctx.submitAndWait(tx, `CREATE_POST of ${published.post_id}`)
      ctx.print({ post_id: published.post_id, id: tx.id, status: 'confirmed', block_index: detail.block_index, author: key.account.pub, size: published.size, fee_ut: tx.fee, hashtags: published.hashtags, hosting_relay: published.hosting_relay },
        [`posted ${published.post_id} in block ${String(detail.block_index)}`])
    }))

  withGlobals(program.command('follow').argument('<to>', 'whom: pubkey, address or key name').description('FOLLOW an account (their posts enter your timeline) and wait for the block'))
    .action(run(async (ctx, [to]) => {
      const target = await ctx.resolve(to)
      const key = await ctx.unlock()
      const tx = followTx(key.account, 'FOLLOW', target.pub)
      const detail = await ctx.submitAndWait(tx, `follow of ${target.label}`)
      ctx.print({ id: tx.id, status: 'confirmed', block_index: detail.block_index, follower: key.account.pub, target: target.pub },
        [`following ${target.label}: ${tx.id} in block ${String(detail.block_index)}`])
    }))

  withGlobals(program.command('like').argument('<post_id>', 'the post (32 hex, as timeline and trending show it)').description('LIKE_POST a post and wait for the block'))
    .action(run(async (ctx, [postId]) => {
      checkPostId(postId)
      await ctx.api(async (c) => await c.postStats(postId)).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) throw new CliError('UNKNOWN_POST', `no post ${postId} on ${ctx.nodeUrl}; check the id with \`kith timeline\` or \`kith trending\``)
        if (err instanceof ApiError && err.status === 410) throw new CliError('UNKNOWN_POST', `post ${postId} was deleted by its author; it cannot be liked`)
        throw err
      })
      const key = await ctx.unlock()
      const tx = postActionTx(key.account, 'LIKE_POST', postId)
      const detail = await ctx.submitAndWait(tx, `like of ${postId}`)
      const stats = await ctx.api(async (c) => await c.postStats(postId))
      ctx.print({ id: tx.id, status: 'confirmed', block_index: detail.block_index, post_id: postId, likes: stats.likes },
        [`liked ${postId} in block ${String(detail.block_index)}; it has ${stats.likes} like${stats.likes === 1 ? '' : 's'}`])
    }))

  withGlobals(program.command('timeline').description('the newest posts of everyone the key follows'))
    .option('--limit <n>', 'how many posts (1 to 100; default 20)')
    .action(run(async (ctx, _args, opts) => {
      const limit = parseCount(opts.limit, '--limit', 1, 100)
      const key = await ctx.keyInfo()
      const page = await ctx.api(async (c) => await c.timeline(key.pub_key, limit))
      ctx.print(page, await showPosts(ctx, page.posts, `no posts from anyone ${key.name} follows; follow someone with \`kith follow <to>\``))
    }))

  withGlobals(program.command('trending').description('the posts of the last hours with the most likes and views'))
    .option('--window <hours>', `how many hours back (1 to ${MAX_WINDOW_HOURS}; default 24)`)
    .option('--limit <n>', 'how many posts (1 to 100; default 20)')
    .action(run(async (ctx, _args, opts) => {
      const window = parseCount(opts.window, '--window', 1, MAX_WINDOW_HOURS)
      const limit = parseCount(opts.limit, '--limit', 1, 100)
      const page = await ctx.api(async (c) => await c.trending(window, limit))
      ctx.print(page, await showPosts(ctx, page.posts, `no posts in the last ${page.window} hours`))
    }))
}
