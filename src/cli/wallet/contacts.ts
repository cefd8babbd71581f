/**
 * Contacts and devices: CONTACT_REQUEST (paying the recipient the anti-spam fee), ACCEPT_CONTACT,
 * CONTACT_BLOCK, LINK_DEVICE and UNLINK_DEVICE (docs/protocol.md, the transaction table). Each
 * signs one transaction with the selected key and waits for the block. Reference: docs/cli.md.
 */
import type { Command } from 'commander'
import { buildTx, type BuildOptions } from '../../client/index.js'
import { MAX_INTRO_CHARS, MIN_CONTACT_FEE_UT } from '../../chain/index.js'
import { parseAmount, showAmount } from './amount.js'
import { run, withGlobals, type Context } from './context.js'
import { CliError } from './errors.js'

const X25519_RE = /^[0-9a-f]{64}$/

/** Signs `opts` with the selected key, submits it, waits for the block and prints `done`. */
async function signAndWait (ctx: Context, what: string, opts: BuildOptions, done: string, extra: Record<string, unknown> = {}): Promise<void> {
  const key = await ctx.unlock()
  const tx = buildTx(key.account, opts)
  const detail = await ctx.submitAndWait(tx, what)
  ctx.print({ id: tx.id, type: tx.type, status: 'confirmed', block_index: detail.block_index, from: key.account.pub, ...(opts.to !== undefined ? { to: opts.to } : {}), ...extra },
    [`${done}: ${tx.id} in block ${String(detail.block_index)}`])
}

/** A device's X25519 key: 64 hex, or the mailbox key of a key of the local keystore. */
async function deviceKey (ctx: Context, device: string): Promise<string> {
  if (X25519_RE.test(device)) return device
  const local = (await ctx.keystore.list()).find((k) => k.name === device)
  if (local !== undefined) return local.x25519_pub
  throw new CliError('BAD_RECIPIENT', `"${device}" is neither a device's X25519 key (64 lowercase hex) nor a key name in ${ctx.keystore.dir}`)
}

export function registerContactCommands (program: Command): void {
  const contact = program.command('contact').description('contact requests on the chain: request (paying the recipient an anti-spam fee), accept, block')
  withGlobals(contact.command('request').argument('<to>', 'whom: pubkey, address or key name').description('CONTACT_REQUEST: ask to become a contact, paying the contact fee to the recipient'))
    .option('--intro <text>', `a few words of introduction (at most ${MAX_INTRO_CHARS} characters)`)
    .option('--fee <amount>', `the contact fee paid to the recipient, as send takes amounts (default and least ${MIN_CONTACT_FEE_UT}ut)`)
    .action(run(async (ctx, [to], opts) => {
      const amount = typeof opts.fee === 'string' ? parseAmount(opts.fee) : MIN_CONTACT_FEE_UT
      if (amount < MIN_CONTACT_FEE_UT) throw new CliError('BAD_AMOUNT', `the contact fee must be at least ${showAmount(MIN_CONTACT_FEE_UT)}`)
      const intro = typeof opts.intro === 'string' ? opts.intro : undefined
      if (intro !== undefined && [...intro].length > MAX_INTRO_CHARS) throw new CliError('BAD_TEXT', `the intro must be at most ${MAX_INTRO_CHARS} characters, got ${[...intro].length}`)
      const target = await ctx.resolve(to)
      await signAndWait(ctx, `contact request to ${target.label}`, { type: 'CONTACT_REQUEST', to: target.pub, amount, payload: intro !== undefined ? { intro } : {} },
        `asked ${target.label} to become a contact (paid ${showAmount(amount)})`, { amount_ut: amount })
    }))
  withGlobals(contact.command('accept').argument('<from>', 'who asked: pubkey, address or key name').description('ACCEPT_CONTACT: accept a pending request'))
    .action(run(async (ctx, [from]) => {
      const target = await ctx.resolve(from)
      await signAndWait(ctx, `acceptance of ${target.label}'s request`, { type: 'ACCEPT_CONTACT', to: target.pub, payload: {} }, `accepted ${target.label} as a contact`)
    }))
  withGlobals(contact.command('block').argument('<who>', 'pubkey, address or key name').description('CONTACT_BLOCK: refuse their requests from now on (with or without a request)'))
    .action(run(async (ctx, [who]) => {
      const target = await ctx.resolve(who)
      await signAndWait(ctx, `block of ${target.label}`, { type: 'CONTACT_BLOCK', to: target.pub, payload: {} }, `blocked ${target.label}`)
    }))

  const device = program.command('device').description('the devices messages to the key are sealed for (each has its own X25519 key)')
  withGlobals(device.command('link').argument('<device>', 'the device\'s X25519 key (64 hex) or a key name of the keystore (its mailbox key)').description('LINK_DEVICE: add a device to the key\'s registry'))
    .option('--name <name>', 'the device\'s name (at most 64 characters)')
    .action(run(async (ctx, [given], opts) => {
      const x25519 = await deviceKey(ctx, given)
      const name = typeof opts.name === 'string' ? opts.name : ''
      await signAndWait(ctx, `link of device ${x25519.slice(0, 16)}…`, { type: 'LINK_DEVICE', payload: { device_x25519_pub: x25519, device_name: name } },
        `linked device ${name !== '' ? `"${name}" ` : ''}${x25519}`, { device_x25519_pub: x25519, device_name: name })
    }))
  withGlobals(device.command('unlink').argument('<device>', 'the device\'s X25519 key (64 hex) or a key name of the keystore').description('UNLINK_DEVICE: remove a device from the key\'s registry'))
    .action(run(async (ctx, [given]) => {
      const x25519 = await deviceKey(ctx, given)
      await signAndWait(ctx, `unlink of device ${x25519.slice(0, 16)}…`, { type: 'UNLINK_DEVICE', payload: { device_x25519_pub: x25519 } }, `unlinked device ${x25519}`, { device_x25519_pub: x25519 })
    }))
}
