/**
 * The wallet and messenger commands of `kith`: keys, balance, send, username, msg. Each talks
 * to a node over its HTTP interface through the client library (src/client); keys stay in the
 * local encrypted keystore (keystore.ts). Reference: docs/cli.md.
 */
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import type { Command } from 'commander'
import { addressOf, buildTx, callContract, transfer } from '../../client/index.js'
import { foldUsername, USERNAME_FEE_UT, USERNAME_MAX_CHARS, USERNAME_MIN_CHARS, USERNAME_RE } from '../../contracts/index.js'
import { keyPairFromSeed, toHex } from '../../crypto/index.js'
import { parseAmount, showAmount } from './amount.js'
import { run, withGlobals } from './context.js'
import { CliError } from './errors.js'
import { SCRYPT_N } from './keystore.js'
import { registerContactCommands } from './contacts.js'
import { registerContractCommands } from './contracts.js'
import { registerFeedCommands } from './feed.js'
import { watchInbox } from './watch.js'
import { mailboxKeysOf, openItems, readInbox, sealFor } from './messages.js'

export { CliError } from './errors.js'
export { Keystore, SCRYPT_N, SCRYPT_R, SCRYPT_P } from './keystore.js'
export { parseAmount } from './amount.js'

/** The seed of a plain (unencrypted) key file, checked against the public key it states. */
async function readPlainKey (file: string): Promise<{ seed: Uint8Array }> {
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw new CliError('BAD_FILE', `cannot read a key from ${file}: ${(err as Error).message}`)
  }
  const { pub_key: pub, seed } = (parsed ?? {}) as { pub_key?: unknown, seed?: unknown }
  if (typeof seed !== 'string' || !/^[0-9a-f]{64}$/i.test(seed) || typeof pub !== 'string') {
    throw new CliError('BAD_FILE', `${file} is not a plain key file: it needs "pub_key" and "seed" (64 hex digits), as .kith/dev_account.json has`)
  }
  const bytes = Buffer.from(seed, 'hex')
  const derived = toHex(keyPairFromSeed(bytes).publicKey)
  if (derived !== pub.toLowerCase()) throw new CliError('BAD_FILE', `${file}: its seed gives the public key ${derived}, not the pub_key ${pub} it states`)
  return { seed: bytes }
}

export function registerWalletCommands (program: Command): void {
  const keys = program.command('keys').description(`the local keystore: Ed25519 keys encrypted with a passphrase (scrypt N=2^${Math.log2(SCRYPT_N)}, AES-256-GCM)`)
  withGlobals(keys.command('new').description('create a key (passphrase from KITH_PASSPHRASE or asked)'))
    .option('--name <name>', 'name of the key (default: "default" for the first key, else the first 8 hex of its pubkey)')
    .action(run(async (ctx, _args, opts) => {
      const info = await ctx.keystore.create(await ctx.passphrase({ confirm: true }), { ...(typeof opts.name === 'string' ? { name: opts.name } : {}) })
      ctx.print(info, [`created key "${info.name}"`, `  pubkey   ${info.pub_key}`, `  address  ${info.address}`, `  mailbox  ${info.x25519_pub} (X25519)`, `  file     ${info.file}`])
    }))
  withGlobals(keys.command('import').argument('<file>', 'a plain key file {"pub_key", "seed"} (hex), such as the dev network\'s .kith/dev_account.json')
    .description('encrypt a plain key file into the keystore (passphrase from KITH_PASSPHRASE or asked); the file is left as it is'))
    .option('--name <name>', 'name of the key (default: the file\'s name without .json)')
    .action(run(async (ctx, [file], opts) => {
      const plain = await readPlainKey(file)
      const name = typeof opts.name === 'string' ? opts.name : basename(file).replace(/\.json$/, '')
      const info = await ctx.keystore.create(await ctx.passphrase({ confirm: true }), { name, seed: plain.seed })
      ctx.print(info, [`imported key "${info.name}" from ${file}`, `  pubkey   ${info.pub_key}`, `  address  ${info.address}`, `  file     ${info.file}`])
    }))
  withGlobals(keys.command('list').description('list the keys of the keystore (no passphrase needed)'))
    .action(run(async (ctx) => {
      const list = await ctx.keystore.list()
      ctx.print({ keystore: ctx.keystore.dir, keys: list }, list.length === 0
        ? [`no keys in ${ctx.keystore.dir}; create one with \`kith keys new\``]
        : list.map((k) => `${k.name.padEnd(16)} ${k.address}  ${k.pub_key}`))
    }))
  withGlobals(keys.command('show').argument('[name]', 'key name (default: the selected key)').description('show a key\'s public parts; --check-passphrase also decrypts it'))
    .option('--check-passphrase', 'decrypt the key to check the passphrase')
    .action(run(async (ctx, args, opts) => {
      const [name] = args as Array<string | undefined>
      const info = opts.checkPassphrase === true ? (await ctx.unlock(name)).info : await ctx.keyInfo(name)
      ctx.print(info, [`key "${info.name}"`, `  pubkey   ${info.pub_key}`, `  address  ${info.address}`, `  mailbox  ${info.x25519_pub} (X25519)`, `  created  ${info.created_at}`, `  file     ${info.file}`])
    }))

  withGlobals(program.command('balance').argument('[who]', 'key name, pubkey or address (default: the selected key)').description('balance of an account'))
    .action(run(async (ctx, args) => {
      const [who] = args as Array<string | undefined>
      const { pub, label } = who === undefined ? await ctx.keyInfo().then((k) => ({ pub: k.pub_key, label: `${k.name} (${k.address})` })) : await ctx.resolve(who)
      const account = await ctx.api(async (c) => await c.address(pub, 1))
      const count = `${account.tx_count} transaction${account.tx_count === 1 ? '' : 's'}`
      ctx.print({ pub_key: pub, balance_ut: account.balance_ut, tx_count: account.tx_count }, [`${label}: ${showAmount(account.balance_ut)}, ${count}`])
    }))

  withGlobals(program.command('send')
    .argument('<to>', 'recipient: pubkey, address or key name')
    .argument('<amount>', 'tokens with up to six decimals (1.5 or 1.5T), or micro-tokens with a ut suffix (1500ut)')
    .description('transfer tokens and wait for the block'))
    .option('--memo <text>', 'memo stored with the transfer')
    .option('--fee <ut>', 'fee in µT (default the minimum, 1000)')
    .action(run(async (ctx, [to, amountText], opts) => {
      const amount = parseAmount(amountText)
      const recipient = await ctx.resolve(to)
      const key = await ctx.unlock()
      const fee = opts.fee === undefined ? undefined : Number(opts.fee)
      const tx = transfer(key.account, recipient.pub, amount, { ...(fee !== undefined ? { fee } : {}), ...(typeof opts.memo === 'string' ? { memo: opts.memo } : {}) })
      const detail = await ctx.submitAndWait(tx, `transfer of ${showAmount(amount)} to ${recipient.label}`)
      ctx.print({ id: tx.id, status: 'confirmed', block_index: detail.block_index, from: key.account.pub, to: recipient.pub, amount_ut: amount, fee_ut: tx.fee },
        [`sent ${showAmount(amount)} to ${recipient.label}: ${tx.id} in block ${String(detail.block_index)}`])
    }))

  const username = program.command('username').description('a name in the username registry (a well-known contract), so others can write to @name')
  withGlobals(username.command('register').argument('<name>', `${USERNAME_MIN_CHARS} to ${USERNAME_MAX_CHARS} characters of a-z, 0-9 and _ (uppercase is folded)`)
    .description(`register the name for the key (${USERNAME_FEE_UT} µT to the registry, plus fee and gas), publishing the key's mailbox key first if it has none; waits for the blocks`))
    .action(run(async (ctx, [name]) => {
      const folded = foldUsername(name)
      if (!USERNAME_RE.test(folded)) throw new CliError('BAD_NAME', `"${name}" is not a username: ${USERNAME_MIN_CHARS} to ${USERNAME_MAX_CHARS} characters of a-z, 0-9 and _`)
      const key = await ctx.unlock()
      const registry = (await ctx.api(async (c) => await c.wellKnownContracts())).contracts.username_registry
      if (registry === undefined) throw new CliError('NO_REGISTRY', `the node at ${ctx.nodeUrl} has no username registry`)
      const owner = await ctx.api(async (c) => await c.usernameRecord(`name:${folded}`))
      if (owner !== undefined) throw new CliError('NAME_TAKEN', `@${folded} already belongs to ${owner === key.account.pub ? 'this key' : addressOf(owner)}`)
      const identity = await ctx.api(async (c) => await c.identity(key.account.pub).catch(() => undefined))
      const x25519 = toHex(key.mailbox.publicKey)
      if (identity?.x25519_pub !== x25519) {
        await ctx.submitAndWait(buildTx(key.account, { type: 'REGISTER_KEY', payload: { x25519_pub: x25519, nickname: folded } }), `mailbox key for @${folded}`)
      }
      const tx = callContract(key.account, registry.contract_id, 'register', [folded], { amount: USERNAME_FEE_UT })
      const detail = await ctx.submitAndWait(tx, `registration of @${folded}`)
      const result = detail.call_result as { ok: boolean, error?: string } | undefined
      if (result?.ok !== true) throw new CliError('REGISTRY_REFUSED', `the registry refused @${folded}: ${result?.error ?? 'no result'} (transaction ${tx.id}; the fee and gas were charged, the ${USERNAME_FEE_UT} µT was not)`)
      ctx.print({ id: tx.id, status: 'confirmed', block_index: detail.block_index, username: folded, pub_key: key.account.pub, gas_used: detail.gas_used },
        [`registered @${folded} for ${key.account.address} in block ${String(detail.block_index)}`])
    }))

  const msg = program.command('msg').description('end-to-end encrypted messages through the relay mailbox')
  withGlobals(msg.command('send').argument('<to>', 'recipient: pubkey, address or key name').argument('<text>', 'the message').description('seal the text for each device of the recipient and upload it'))
    .action(run(async (ctx, [to, text]) => {
      const recipient = await ctx.resolve(to)
      const key = await ctx.unlock()
      const mailboxes = await ctx.api(async (c) => await mailboxKeysOf(c, recipient.pub))
      const ids: string[] = []
      for (const mailbox of mailboxes) {
        const envelope = sealFor(mailbox, text, key.mailbox, key.account.pub)
        const res = await ctx.api(async (c) => await c.broadcast(envelope))
        ids.push(res.id)
        ctx.progress(`sealed for ${mailbox.slice(0, 16)}…: envelope ${res.id}`)
      }
      ctx.print({ to: recipient.pub, envelopes: mailboxes.map((m, i) => ({ recipient_pub: m, id: ids[i] })) },
        [`sent to ${recipient.label}: ${ids.length} envelope${ids.length === 1 ? '' : 's'} (one per device)`])
    }))
  withGlobals(msg.command('inbox').description('fetch the key\'s mailbox, open each envelope, show them per conversation'))
    .action(run(async (ctx) => {
      const key = await ctx.unlock()
      const items = await ctx.api(async (c) => await readInbox(c, key.mailbox, key.account))
      const conversations = openItems(items, key.mailbox)
      const withNames = await Promise.all(conversations.map(async (c) => ({ ...c, name: await ctx.peerName(c.peer, c.peer_is_ed25519) })))
      ctx.print({ mailbox: toHex(key.mailbox.publicKey), count: items.length, conversations: withNames }, () => {
        if (items.length === 0) return [`no messages for ${key.info.name} (mailbox ${toHex(key.mailbox.publicKey)})`]
        const lines: string[] = []
        for (const c of withNames) {
          lines.push(`── ${c.name !== undefined ? `${c.name} ` : ''}${c.peer}${c.peer_is_ed25519 ? '' : ' (X25519; the sender gave no identity)'}`)
          for (const m of c.messages) lines.push(`  ${m.sent_at_human}  ${m.text ?? '[does not open with this key]'}`)
        }
        return lines
      })
    }))
  withGlobals(msg.command('watch').description('show each message to the key as it arrives (live over the node\'s WebSocket), until Ctrl-C'))
    .action(run(async (ctx) => { await watchInbox(ctx, await ctx.unlock()) }))

  registerContactCommands(program)
  registerFeedCommands(program)
  registerContractCommands(program)
}
