/** The feed's and registries' pages: an identity, a post, trending posts and hashtags, one hashtag. */
import { enc, find, getJson, usernameOf, withToken, type Devices, type FeedItem, type Identity, type PostBody, type PostStats } from './api.js'
import { card, fill, h, kv, link, notFound, table, type Child } from './dom.js'
import { formatBytes, formatCount, formatTime, tagCounts, timeAgo } from './format.js'
import { accountLink, accountName, postLink, txEnds, txLink, type Cleanup, type View } from './view.js'

function postList (view: View, posts: readonly FeedItem[], empty: string): HTMLElement {
  if (posts.length === 0) return h('p', { class: 'muted' }, empty)
  return h('div', { class: 'posts' }, posts.map((p) => h('article', { class: 'post', 'data-post': p.post_id },
    h('div', { class: 'meta' }, accountLink(p.author), ' · ', timeAgo(p.created_at * 1000, view.now()), p.has_attachment ? ` · ${p.attachment_mime.split('/')[0] || 'attachment'}` : ''),
    h('div', { class: 'text' }, link(`/post/${p.post_id}`, p.content_preview === '' ? '(no text)' : p.content_preview), p.content_truncated ? '…' : ''),
    h('div', { class: 'meta' }, h('span', { 'data-likes': String(p.likes) }, `♥ ${formatCount(p.likes)}`), ` · ${formatCount(p.views)} views`,
      p.hashtags.length > 0 ? [' · ', p.hashtags.map((t, i) => [i > 0 ? ' ' : '', link(`/tag/${enc(t)}`, `#${t}`)])] : null))))
}

// ---- an identity ----

export async function identityPage (view: View, account: string): Promise<Cleanup> {
  const identity = await find<Identity>(`/api/identity/${enc(account)}`)
  if (!view.current()) return undefined
  if (identity === undefined) {
    fill(view.main, notFound(`No identity is registered for ${account}.`), h('p', {}, link(`/address/${enc(account)}`, 'See the address instead')))
    return undefined
  }
  const pub = identity.pub_key
  const [devices, username, posts] = await Promise.all([
    find<Devices>(`/api/devices/${pub}`).catch(() => undefined),
    usernameOf(pub),
    find<{ posts: FeedItem[] }>(`/feed/author/${pub}?limit=10`).catch(() => undefined)
  ])
  if (!view.current()) return undefined
  const deviceTxEnd = txEnds((devices?.devices ?? []).map((d) => d.tx_id))
  fill(view.main,
    h('h1', {}, identity.nickname !== '' ? identity.nickname : 'Identity'),
    card(undefined, kv([
      ['Nickname', h('span', { id: 'nickname' }, identity.nickname !== '' ? identity.nickname : '—')],
      ['Username', username !== undefined ? h('span', { id: 'username' }, `@${username}`) : undefined],
      ['Pubkey', h('span', { class: 'mono' }, pub)],
      ['Address', link(`/address/${pub}`, h('span', { class: 'mono' }, identity.address))],
      ['X25519 key', identity.x25519_pub !== '' ? h('span', { class: 'mono' }, identity.x25519_pub) : h('span', { class: 'muted' }, 'none published')],
      ['Registered', identity.registered ? 'yes' : 'no (devices only)'],
      ['Devices', formatCount(identity.device_count)]
    ])),
    card('Devices', table([
      { title: 'Name', cell: (d) => (d.name !== '' ? d.name : h('span', { class: 'muted' }, 'unnamed')) },
      { title: 'X25519 key', cell: (d) => h('span', { class: 'mono', title: d.x25519_pub }, d.x25519_pub) },
      { title: 'Linked', class: 'wide', cell: (d) => formatTime(d.linked_at * 1000) },
      { title: 'Tx', class: 'wide', cell: (d) => txLink(d.tx_id, deviceTxEnd(d.tx_id)) }
    ], devices?.devices ?? [], 'No devices linked: messages go to the identity\'s X25519 key.')),
    card('Posts', postList(view, posts?.posts ?? [], 'No posts on this node.')))
  return undefined
}

// ---- a post ----

export async function postPage (view: View, id: string): Promise<Cleanup> {
  let gone = false
  let post: PostBody | undefined
  try {
    post = await getJson<PostBody>(`/feed/post/${enc(id)}`)
  } catch (err) {
    const status = (err as { status?: number }).status
    if (status === 410) gone = true
    else if (status !== 404 && status !== 400) throw err
  }
  if (!view.current()) return undefined
  if (post === undefined) {
    fill(view.main, gone ? notFound(`Post ${id} was deleted by its author.`, 'It stays on the chain, marked deleted.') : notFound(`No post ${id} on this node.`, 'Post bodies live on the node that hosts them.'))
    return undefined
  }
  const stats = await find<PostStats>(`/feed/post/${enc(id)}/stats`).catch(() => undefined)
  if (!view.current()) return undefined
  const mime = post.attachment_mime ?? ''
  const src = withToken(`/feed/post/${enc(id)}/attachment`)
  let attachment: Child = null
  if (mime.startsWith('image/')) attachment = h('img', { class: 'attachment', id: 'attachment', src, alt: 'attachment' })
  else if (mime.startsWith('video/')) attachment = h('video', { class: 'attachment', src, controls: '' })
  else if (mime.startsWith('audio/')) attachment = h('audio', { src, controls: '' })
  else if (mime !== '') attachment = h('a', { href: src }, `attachment (${mime})`)
  const size = post.attachment !== undefined ? Math.floor(post.attachment.length * 3 / 4) : undefined
  fill(view.main,
    h('h1', {}, 'Post'),
    card(undefined,
      h('div', { class: 'meta muted' }, accountLink(post.author), ' · ', formatTime(post.created_at * 1000)),
      h('p', { class: 'content', id: 'content' }, post.content),
      attachment,
      // likes right under the photo: on a phone the stats card is below the fold
      h('p', { class: 'post-stats' }, h('span', { 'data-likes': stats !== undefined ? String(stats.likes) : undefined }, '♥ ', h('span', { id: 'likes' }, stats !== undefined ? formatCount(stats.likes) : '—')),
        stats !== undefined ? ` · ${formatCount(stats.views)} views` : ''),
      post.hashtags.length > 0 ? h('div', { class: 'tags' }, post.hashtags.map((t) => link(`/tag/${enc(t)}`, h('span', { class: 'tag' }, `#${t}`)))) : null),
    card('Stats', kv([
      ['Likes', stats !== undefined ? formatCount(stats.likes) : '—'],
      ['Views', stats !== undefined ? formatCount(stats.views) : '—'],
      ['Post id', h('span', { class: 'mono' }, post.post_id)],
      ['Author', link(`/identity/${post.author}`, accountName(post.author, true))],
      ['Content type', post.content_type],
      ['Attachment', mime !== '' ? `${mime}${size !== undefined ? `, ${formatBytes(size)}` : ''}` : undefined],
      ['Reply to', post.reply_to !== '' ? postLink(post.reply_to, post.reply_to) : undefined],
      ['Quotes', post.quote_of !== '' ? postLink(post.quote_of, post.quote_of) : undefined]
    ])))
  return undefined
}

// ---- trending, and one hashtag ----

const WINDOWS: Array<[number, string]> = [[1, 'hour'], [24, 'day'], [168, 'week']]

export async function trendingPage (view: View, windowText = '24'): Promise<Cleanup> {
  const window = WINDOWS.some(([w]) => String(w) === windowText) ? Number(windowText) : 24
  const trending = await getJson<{ posts: FeedItem[] }>(`/feed/trending?window=${window}&limit=50`)
  if (!view.current()) return undefined
  const tags = tagCounts(trending.posts)
  fill(view.main,
    h('h1', {}, 'Trending'),
    h('div', { class: 'pager' }, 'Last ', WINDOWS.map(([w, name], i) => [i > 0 ? ' · ' : '', w === window ? h('strong', {}, name) : link(`/trending/${w}`, name)])),
    h('div', { class: 'grid2' },
      card('Posts', h('div', { id: 'trending-posts' }, postList(view, trending.posts.slice(0, 20), 'No posts in this window.'))),
      card('Hashtags', h('div', { id: 'trending-tags' }, table([
        { title: 'Hashtag', cell: (t) => link(`/tag/${enc(t.tag)}`, `#${t.tag}`) },
        { title: 'Trending posts', class: 'num', cell: (t) => formatCount(t.posts) }
      ], tags.slice(0, 20), 'No hashtags in this window.')))))
  return undefined
}

export async function tagPage (view: View, tag: string): Promise<Cleanup> {
  const listing = await find<{ tag: string, posts: FeedItem[] }>(`/feed/hashtag/${enc(tag)}?limit=50`)
  if (!view.current()) return undefined
  if (listing === undefined) {
    fill(view.main, notFound(`"${tag}" is not a hashtag.`))
    return undefined
  }
  fill(view.main, h('h1', {}, `#${listing.tag}`), card(undefined, postList(view, listing.posts, 'No posts carry this hashtag.')))
  return undefined
}
