/**
 * The wallet and messenger commands run as processes (`bin/kith ...`) against a real node: the
 * walk-through of docs/cli.md from a new key to a first message read by a second key and a first
 * post seen in a timeline, liked and trending; the errors people meet; the keystore's protection
 * on disk.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Keystore } from '../../src/cli/wallet/index.js'
import { buildTx } from '../../src/client/index.js'
import { generateSealKey } from '../../src/relay/seal.js'
import { generateKeyPair, seedOf, toBase64, toHex } from '../../src/crypto/index.js'
import { KITH_BIN, REPO_ROOT, childEnv, http, pickBasePort, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'
import { exifRead, groupsOf, photoWithMetadata } from '../helpers/media-files.js'
import sharp from 'sharp'

const execFileP = promisify(execFile)
const PASSPHRASE = 'correct horse battery staple'

interface Run { code: number, stdout: string, stderr: string }

async function kith (args: string[], env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileP(KITH_BIN, args, { env: childEnv(env), cwd: REPO_ROOT, timeout: 60_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number, stdout?: string, stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

async function ok (args: string[], env: Record<string, string>): Promise<Run> {
  const res = await kith(args, env)
  assert.equal(res.code, 0, `kith ${args.join(' ')} failed:\n${res.stderr}${res.stdout}`)
  return res
}

async function okJson<T> (args: string[], env: Record<string, string>): Promise<T> {
  return JSON.parse((await ok([...args, '--json'], env)).stdout) as T
}

describe('cli wallet', () => {
  let dir: string
  let keystore: string
  let env: Record<string, string>
  let node: NodeProcess
  let alice: { pub_key: string, address: string, x25519_pub: string, file: string }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-cli-'))
    keystore = join(dir, 'keys')
    env = { KITH_KEYSTORE: keystore, KITH_PASSPHRASE: PASSPHRASE }
    // the key comes first, then a node whose genesis funds it
    alice = await okJson(['keys', 'new', '--name', 'alice'], env)
    // a fixed HTTP port, so that `msg watch` can find the node again after a restart
    node = await startNode({ alloc: [{ pub: alice.pub_key, amountUt: 100_000_000 }], args: ['--http-addr', `127.0.0.1:${await pickBasePort(1)}`] })
    env.KITH_NODE = node.url
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('walk-through: fund, send, register a username, message by name, read the inbox, post, follow, timeline, like, trending', async () => {
    const bob = await okJson<{ pub_key: string, address: string, x25519_pub: string }>(['keys', 'new', '--name', 'bob'], env)
    const list = await okJson<{ keys: Array<{ name: string }> }>(['keys', 'list'], env)
    assert.deepEqual(list.keys.map((k) => k.name), ['alice', 'bob'])

    const before = await okJson<{ balance_ut: number }>(['balance', 'alice'], env)
    assert.equal(before.balance_ut, 100_000_000)

    // send by address, amount in T with decimals; progress goes to stderr, the result to stdout
    const sent = await ok(['send', bob.address, '2.5', '--key', 'alice'], env)
    assert.match(sent.stdout, /sent 2\.5 T \(2500000 µT\)/)
    assert.match(sent.stderr, /confirmed in block \d+/)
    const bobBalance = await okJson<{ balance_ut: number }>(['balance', bob.pub_key], env)
    assert.equal(bobBalance.balance_ut, 2_500_000)
    // µT with a suffix, by key name
    const micro = await okJson<{ amount_ut: number, status: string }>(['send', 'bob', '1500ut', '--key', 'alice'], env)
    assert.deepEqual([micro.amount_ut, micro.status], [1500, 'confirmed'])

    // a username in the registry (uppercase folded); the key's mailbox key is published on the way
    const registered = await okJson<{ username: string, pub_key: string, gas_used: number }>(['username', 'register', 'Bob_Smith', '--key', 'bob'], env)
    assert.deepEqual([registered.username, registered.pub_key], ['bob_smith', bob.pub_key])
    assert.ok(registered.gas_used > 0)
    assert.equal(await node.client.usernameRecord('name:bob_smith'), bob.pub_key)
    const identity = await node.client.identity(bob.pub_key)
    assert.deepEqual([identity.nickname, identity.x25519_pub], ['bob_smith', bob.x25519_pub])
    const taken = await kith(['username', 'register', 'bob_smith', '--key', 'alice'], env)
    assert.equal(taken.code, 1)
    assert.match(taken.stderr, /@bob_smith already belongs to/)
    const short = await kith(['username', 'register', 'bob', '--key', 'alice'], env)
    assert.match(short.stderr, /"bob" is not a username: 4 to 32 characters/)

    // to a username: resolved through the registry
    const message = await okJson<{ envelopes: Array<{ recipient_pub: string }> }>(['msg', 'send', '@bob_smith', 'hello bob, from alice', '--key', 'alice'], env)
    assert.deepEqual(message.envelopes.map((e) => e.recipient_pub), [bob.x25519_pub])

    const inbox = await okJson<{ count: number, conversations: Array<{ peer: string, messages: Array<{ text?: string }> }> }>(['msg', 'inbox', '--key', 'bob'], env)
    assert.equal(inbox.count, 1)
    assert.equal(inbox.conversations[0].peer, alice.pub_key)
    assert.equal(inbox.conversations[0].messages[0].text, 'hello bob, from alice')
    const readable = await ok(['msg', 'inbox', '--key', 'bob'], env)
    assert.match(readable.stdout, /alice/)
    assert.match(readable.stdout, /hello bob, from alice/)

    // the first post: bob publishes, alice follows bob and sees it in her timeline, likes it, it trends
    const posted = await ok(['post', 'publish', 'first post from bob #hello', '--key', 'bob', '--json'], env)
    const post = JSON.parse(posted.stdout) as { post_id: string, status: string, hashtags: string[] }
    assert.match(post.post_id, /^[0-9a-f]{32}$/)
    assert.deepEqual([post.status, post.hashtags], ['confirmed', ['hello']])
    assert.match(posted.stderr, /published post [0-9a-f]{32}.*\n.*confirmed in block \d+/s)
    const followed = await okJson<{ status: string, target: string }>(['follow', 'bob_smith', '--key', 'alice'], env)
    assert.deepEqual([followed.status, followed.target], ['confirmed', bob.pub_key])
    const timeline = await okJson<{ posts: Array<{ post_id: string, author: string, content_preview: string }> }>(['timeline', '--key', 'alice'], env)
    assert.deepEqual(timeline.posts.map((p) => [p.post_id, p.author, p.content_preview]), [[post.post_id, bob.pub_key, 'first post from bob #hello']])
    const readableTimeline = await ok(['timeline', '--key', 'alice'], env)
    assert.match(readableTimeline.stdout, new RegExp(`${post.post_id}  bob  .*0 likes`))
    assert.match(readableTimeline.stdout, /first post from bob #hello/)
    const liked = await ok(['like', post.post_id, '--key', 'alice'], env)
    assert.match(liked.stdout, /it has 1 like$/m)
    const trending = await okJson<{ window: number, posts: Array<{ post_id: string, likes: number }> }>(['trending', '--window', '2'], env)
    assert.equal(trending.window, 2)
    assert.deepEqual(trending.posts.map((p) => [p.post_id, p.likes]), [[post.post_id, 1]])
    assert.match((await ok(['trending'], env)).stdout, new RegExp(`${post.post_id}  bob  .*1 like,`))
  })

  test('a post whose attachment file does not exist is refused before anything is sent', async () => {
    const missing = join(dir, 'no-such-photo.jpg')
    const res = await kith(['post', 'publish', 'look', '--attach', missing, '--key', 'alice'], env)
    assert.equal(res.code, 1)
    assert.match(res.stderr, new RegExp(`attachment ${missing} does not exist; check the path given to --attach`))
    const odd = await kith(['post', 'publish', 'look', '--attach', join(dir, 'notes.txt'), '--key', 'alice'], env)
    assert.match(odd.stderr, /cannot tell the type of attachment .*notes\.txt.*\.jpg/)
  })

  test('a post with a photo: the node stores it scrubbed (no metadata left, at most 1080 px)', async () => {
    const photo = join(dir, 'holiday.jpg')
    await writeFile(photo, await photoWithMetadata(2000, 1500))
    const posted = JSON.parse((await ok(['post', 'publish', 'a photo from the cli', '--attach', photo, '--key', 'alice', '--json'], env)).stdout) as { post_id: string, status: string }
    assert.equal(posted.status, 'confirmed')
    const attachment = await fetch(`${node.url}/feed/post/${posted.post_id}/attachment`)
    assert.equal(attachment.status, 200)
    assert.equal(attachment.headers.get('content-type'), 'image/jpeg')
    const stored = Buffer.from(await attachment.arrayBuffer())
    const { width, height } = await sharp(stored).metadata()
    assert.ok(Math.max(width ?? 0, height ?? 0) <= 1080, `${width}×${height}`)
    const groups = [...groupsOf(await exifRead(stored, 'jpg'))]
    assert.deepEqual(groups.filter((g) => ['EXIF', 'GPS', 'ICC_Profile', 'XMP', 'IPTC', 'MakerNotes'].includes(g)), [], `metadata left: ${groups.join(', ')}`)
  })

  test('liking an unknown post id says so and how to find post ids', async () => {
    const res = await kith(['like', 'ab'.repeat(16), '--key', 'alice'], env)
    assert.equal(res.code, 1)
    assert.match(res.stderr, /no post abab\S* on http:.*kith timeline/)
    const bad = await kith(['like', 'not-a-post', '--key', 'alice'], env)
    assert.match(bad.stderr, /"not-a-post" is not a post id \(32 lowercase hex\)/)
  })

  test('msg watch prints each message opened as it arrives, rides out a node restart without missing or repeating one, and Ctrl-C ends it', async () => {
    await ok(['keys', 'new', '--name', 'erin'], env)
    await ok(['send', 'erin', '0.1', '--key', 'alice'], env)
    await ok(['username', 'register', 'erin', '--key', 'erin'], env)
    const watcher = spawn(KITH_BIN, ['msg', 'watch', '--key', 'erin'], { env: childEnv(env), cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    watcher.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    watcher.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const exited = new Promise<number | null>((resolve) => watcher.once('exit', (code) => resolve(code)))
    try {
      await waitFor(() => /watching the mailbox of erin/.test(stderr), 30_000, { message: `the watcher to subscribe: ${stderr}` })
      await ok(['msg', 'send', 'erin', 'first, live', '--key', 'alice'], env)
      await waitFor(() => /first, live/.test(stdout), 15_000, { message: `the first message on stdout: ${stderr}` })
      await ok(['msg', 'send', 'erin', 'second, live', '--key', 'bob'], env)
      await waitFor(() => /second, live/.test(stdout), 15_000, { message: `the second message on stdout: ${stderr}` })
      await node.stop()
      await node.restart()
      await waitFor(() => /reconnecting in/.test(stderr), 15_000, { message: `the watcher to notice the restart: ${stderr}` })
      await waitFor(() => (stderr.match(/watching the mailbox of erin/g) ?? []).length === 2, 30_000, { message: `the watcher to subscribe again: ${stderr}` })
      await ok(['msg', 'send', 'erin', 'third, after the restart', '--key', 'alice'], env)
      await waitFor(() => /third, after the restart/.test(stdout), 15_000, { message: `the third message on stdout: ${stderr}` })
    } finally {
      watcher.kill('SIGINT')
    }
    assert.equal(await exited, 0, stderr)
    const lines = stdout.trim().split('\n')
    assert.equal(lines.length, 3, 'the replay after reconnecting repeats nothing')
    assert.match(lines[0], new RegExp(`^\\S+Z  alice ${alice.pub_key.slice(0, 16)}…: first, live$`))
    assert.match(lines[1], / {2}bob [0-9a-f]{16}…: second, live$/)
  })

  test('contacts: request paying the fee, accept, block; devices: link, unlink', async () => {
    const frank = await okJson<{ pub_key: string, x25519_pub: string }>(['keys', 'new', '--name', 'frank'], env)
    const gina = await okJson<{ x25519_pub: string }>(['keys', 'new', '--name', 'gina'], env)
    await ok(['send', 'frank', '0.1', '--key', 'alice'], env)
    await ok(['send', 'gina', '0.1', '--key', 'alice'], env)

    const request = await okJson<{ type: string, status: string, to: string, amount_ut: number }>(['contact', 'request', 'frank', '--intro', 'hi, alice here', '--key', 'alice'], env)
    assert.deepEqual([request.type, request.status, request.to, request.amount_ut], ['CONTACT_REQUEST', 'confirmed', frank.pub_key, 5000])
    assert.equal((await okJson<{ balance_ut: number }>(['balance', 'frank'], env)).balance_ut, 100_000 + 5000)
    const accepted = await ok(['contact', 'accept', 'alice', '--key', 'frank'], env)
    assert.match(accepted.stdout, /^accepted alice \(kith1\S+\) as a contact: tx-\d+ in block \d+$/m)

    await ok(['contact', 'block', 'gina', '--key', 'frank'], env)
    const refused = await kith(['contact', 'request', 'frank', '--key', 'gina'], env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /the node refused the contact request to frank .*\(400\)/)
    const cheap = await kith(['contact', 'request', 'frank', '--fee', '4999ut', '--key', 'gina'], env)
    assert.match(cheap.stderr, /the contact fee must be at least 0\.005 T \(5000 µT\)/)

    // gina's mailbox key as one of frank's devices, by key name; messages to frank then go to it
    const linked = await okJson<{ device_x25519_pub: string }>(['device', 'link', 'gina', '--name', 'tablet', '--key', 'frank'], env)
    assert.equal(linked.device_x25519_pub, gina.x25519_pub)
    const devices = await node.client.devices(frank.pub_key)
    assert.deepEqual(devices.devices.map((d) => [d.x25519_pub, d.name]), [[gina.x25519_pub, 'tablet']])
    const sent = await okJson<{ envelopes: Array<{ recipient_pub: string }> }>(['msg', 'send', 'frank', 'to the tablet', '--key', 'alice'], env)
    assert.deepEqual(sent.envelopes.map((e) => e.recipient_pub), [gina.x25519_pub])
    await ok(['device', 'unlink', gina.x25519_pub, '--key', 'frank'], env)
    assert.equal((await node.client.devices(frank.pub_key)).count, 0)
    const bad = await kith(['device', 'link', 'nothing-like-a-key', '--key', 'frank'], env)
    assert.match(bad.stderr, /neither a device's X25519 key \(64 lowercase hex\) nor a key name/)
  })

  test('on a node that requires signed inbox reads, msg inbox signs its reads and works', async () => {
    const strict = await startNode({ alloc: [{ pub: alice.pub_key, amountUt: 100_000_000 }], env: { SVC_RELAY_READ_AUTH: 'true' } })
    const on = { ...env, KITH_NODE: strict.url }
    await ok(['username', 'register', 'alice_strict', '--key', 'alice'], on)
    await ok(['msg', 'send', '@alice_strict', 'a note to self', '--key', 'alice'], on)
    const alicePub = await okJson<{ x25519_pub: string }>(['keys', 'show', 'alice'], on)
    const unsigned = await http(strict.url, 'GET', `/relay/inbox?pub=${alicePub.x25519_pub}`)
    assert.equal(unsigned.status, 401, 'a read without the owner\'s signature is refused here')
    const inbox = await okJson<{ count: number, conversations: Array<{ messages: Array<{ text?: string }> }> }>(['msg', 'inbox', '--key', 'alice'], on)
    assert.equal(inbox.count, 1)
    assert.equal(inbox.conversations[0].messages[0].text, 'a note to self')
  })

  test('contracts: list, deploy the example counter, call it, read its state; call the registry by its ABI name, read its logs; a failed call exits 1', async () => {
    const listed = await okJson<{ contracts: Array<{ name: string, well_known: boolean }> }>(['contract', 'list'], env)
    assert.ok(listed.contracts.some((c) => c.name === 'username_registry' && c.well_known))
    const deployed = await okJson<{ contract_id: string, methods: string[] }>(['contract', 'deploy', join(REPO_ROOT, 'contracts', 'build', 'counter.wasm'), '--name', 'counter', '--version', '1.0.0', '--key', 'alice'], env)
    assert.match(deployed.contract_id, /^[0-9a-f]{40}$/)
    assert.deepEqual(deployed.methods, ['get', 'increment'])
    const called = await ok(['contract', 'call', deployed.contract_id, 'increment', '--key', 'alice'], env)
    assert.match(called.stdout, /counter\.increment succeeded in block \d+\ngas used \d+ of 1000000, costing \d+ µT beside the 1000 µT fee\nreturned 1$/m)
    const state = await okJson<{ value_u64: number, value_hex: string }>(['contract', 'state', deployed.contract_id, 'count'], env)
    assert.deepEqual([state.value_u64, state.value_hex], [1, '0100000000000000'])
    assert.match((await ok(['contract', 'state', deployed.contract_id, 'nothing'], env)).stdout, /^nothing: not set$/m)

    const registered = await okJson<{ ok: boolean, gas_used: number }>(['contract', 'call', 'username_registry', 'register', '["alice_cli"]', '--amount', '10000ut', '--key', 'alice'], env)
    assert.equal(registered.ok, true)
    assert.match((await ok(['contract', 'state', 'username_registry', 'name:alice_cli'], env)).stdout, new RegExp(`name:alice_cli: "${alice.pub_key}"`))
    assert.match((await ok(['contract', 'logs', 'username_registry', '--limit', '1'], env)).stdout, new RegExp(`register alice_cli ${alice.pub_key}`))
    const refused = await kith(['contract', 'call', 'username_registry', 'register', '["x"]', '--amount', '10000ut', '--key', 'alice'], env)
    assert.equal(refused.code, 1)
    assert.match(refused.stdout, /username_registry\.register failed in block \d+: abort: .*the 0\.01 T \(10000 µT\) came back/)
    const bad = await kith(['contract', 'call', 'username_registry', 'nope', '--key', 'alice'], env)
    assert.match(bad.stderr, /username_registry \([0-9a-f]{40}\) has no method nope; it has .*register/)
    assert.match((await kith(['contract', 'call', 'no_such_thing', 'x'], env)).stderr, /neither a contract id .* nor the ABI name of a well-known contract/)
    // names Object.prototype has are no well-known contracts either
    for (const name of ['constructor', 'toString']) {
      assert.match((await kith(['contract', 'state', name, 'k'], env)).stderr, /neither a contract id .* nor the ABI name of a well-known contract/, name)
    }
    assert.match((await kith(['contract', 'call', 'username_registry', 'register', '{"a":1}', '--key', 'alice'], env)).stderr, /must be a JSON array/)
  })

  test('keys import: a plain key file such as the dev account\'s becomes a keystore key that signs; a file whose seed and pub_key disagree is refused', async () => {
    const pair = generateKeyPair()
    const file = join(dir, 'dev_account.json')
    await writeFile(file, JSON.stringify({ type: 'ed25519', pub_key: toHex(pair.publicKey), seed: toHex(seedOf(pair)) }))
    const imported = await okJson<{ name: string, pub_key: string }>(['keys', 'import', file], env)
    assert.deepEqual([imported.name, imported.pub_key], ['dev_account', toHex(pair.publicKey)])
    await ok(['send', imported.pub_key, '1', '--key', 'alice'], env)
    await ok(['send', 'alice', '0.5', '--key', 'dev_account'], env)
    const balance = await ok(['balance', '--key', 'dev_account'], env)
    assert.match(balance.stdout, /^dev_account \(\S+\): 0\.499 T \(499000 µT\), 2 transactions$/m)
    const one = await ok(['balance', 'dev_account'], env)
    assert.match(one.stdout, /^dev_account \(\S+\): /m)

    const other = generateKeyPair()
    await writeFile(file, JSON.stringify({ pub_key: toHex(other.publicKey), seed: toHex(seedOf(pair)) }))
    const mismatch = await kith(['keys', 'import', file, '--name', 'other'], env)
    assert.equal(mismatch.code, 1)
    assert.match(mismatch.stderr, /its seed gives the public key [0-9a-f]{64}, not the pub_key/)
    await writeFile(file, 'not json')
    const garbage = await kith(['keys', 'import', file, '--name', 'other'], env)
    assert.equal(garbage.code, 1)
    assert.match(garbage.stderr, /cannot read a key from/)
  })

  test('optional arguments left out: keys show and balance use the selected key', async () => {
    assert.match((await ok(['keys', 'show', '--key', 'alice'], env)).stdout, /^key "alice"/)
    assert.match((await ok(['balance', '--key', 'alice'], env)).stdout, new RegExp(`^alice \\(${alice.address}\\): `))
  })

  test('a message to a key that published no mailbox key says what the recipient must do', async () => {
    const carol = await okJson<{ pub_key: string }>(['keys', 'new', '--name', 'carol'], env)
    const res = await kith(['msg', 'send', carol.pub_key, 'hi', '--key', 'alice'], env)
    assert.equal(res.code, 1)
    assert.match(res.stderr, /username register/)
  })

  test('a message goes once to each linked device of the recipient, not to the identity key', async () => {
    const dave = await okJson<{ pub_key: string }>(['keys', 'new', '--name', 'dave'], env)
    await ok(['send', 'dave', '0.1', '--key', 'alice'], env)
    await ok(['username', 'register', 'dave', '--key', 'dave'], env)
    const store = new Keystore(keystore)
    const daveKey = await store.unlock(await store.find('dave'), PASSPHRASE)
    const devices = [generateSealKey(), generateSealKey()].map((k) => toHex(k.publicKey))
    for (const device of devices) {
      await node.client.submitAndWait(buildTx(daveKey.account, { type: 'LINK_DEVICE', payload: { device_x25519_pub: device, device_name: 'phone' } }))
    }
    const sent = await okJson<{ to: string, envelopes: Array<{ recipient_pub: string }> }>(['msg', 'send', dave.pub_key, 'to every device', '--key', 'alice'], env)
    assert.equal(sent.to, dave.pub_key)
    assert.deepEqual(sent.envelopes.map((e) => e.recipient_pub).sort(), [...devices].sort())
  })

  test('the key file is not world-readable and holds no seed in clear', async () => {
    const file = await stat(alice.file)
    assert.equal(file.mode & 0o777, 0o600)
    assert.equal((await stat(keystore)).mode & 0o777, 0o700)
    const store = new Keystore(keystore)
    const unlocked = await store.unlock(await store.find('alice'), PASSPHRASE)
    const seed = seedOf(unlocked.account.keyPair)
    const text = await readFile(alice.file, 'utf8')
    assert.ok(!text.includes(toHex(seed)))
    assert.ok(!text.includes(toBase64(seed)))
    assert.ok(!text.includes(toHex(unlocked.mailbox.secretKey)))
    const shown = await ok(['keys', 'show', 'alice', '--check-passphrase'], env)
    assert.ok(!shown.stdout.includes(toHex(seed)))
  })

  test('a wrong passphrase is refused with a clear error and sends nothing', async () => {
    const res = await kith(['send', 'bob', '1', '--key', 'alice'], { ...env, KITH_PASSPHRASE: 'wrong' })
    assert.equal(res.code, 1)
    assert.match(res.stderr, /wrong passphrase for key "alice"/)
  })

  test('an unreachable node is reported with what to do', async () => {
    const res = await kith(['balance', 'alice', '--node', 'http://127.0.0.1:1'], env)
    assert.equal(res.code, 1)
    assert.match(res.stderr, /cannot reach a node at http:\/\/127\.0\.0\.1:1.*npm start/)
  })

  test('a bad amount or recipient names the accepted forms', async () => {
    const amount = await kith(['send', 'bob', '1.2345678', '--key', 'alice'], env)
    assert.match(amount.stderr, /at most six decimals/)
    const to = await kith(['send', 'nobody-here', '1', '--key', 'alice'], env)
    assert.match(to.stderr, /not a 64-hex pubkey, a kith address/)
  })
})
