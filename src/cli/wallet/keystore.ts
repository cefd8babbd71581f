/**
 * The local keystore: one JSON file per key, `<name>.json`, in a directory only its owner can
 * read (0700; files 0600). The Ed25519 seed is encrypted with a key derived from a passphrase by
 * scrypt (N = 2^17, r = 8, p = 1: OWASP's recommendation, 128 MiB and a few hundred ms) and
 * AES-256-GCM, whose tag also covers the file's public fields. The X25519 mailbox key is derived
 * from the seed (libsodium's Ed25519 → X25519 map), so only its public half is stored.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt, type ScryptOptions } from 'node:crypto'
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { accountFrom, type Account } from '../../client/index.js'
import { generateKeyPair, keyPairFromSeed, seedOf, toHex } from '../../crypto/index.js'
import { sealKeyFromEd25519, type SealKey } from '../../relay/index.js'
import { CliError } from './errors.js'

export const SCRYPT_N = 2 ** 17
export const SCRYPT_R = 8
export const SCRYPT_P = 1
const KEY_BYTES = 32
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

export interface KeyFile {
  version: 1
  name: string
  pub_key: string
  address: string
  x25519_pub: string
  created_at: string
  crypto: {
    kdf: 'scrypt'
    kdfparams: { n: number, r: number, p: number, dklen: number, salt: string }
    cipher: 'aes-256-gcm'
    iv: string
    ciphertext: string
    tag: string
  }
}

/** A key as listed: public fields only. */
export type KeyInfo = Omit<KeyFile, 'crypto' | 'version'> & { file: string }

export interface UnlockedKey {
  info: KeyInfo
  account: Account
  mailbox: SealKey
}

export function defaultKeystoreDir (env: NodeJS.ProcessEnv = process.env): string {
  return env.KITH_KEYSTORE ?? join(homedir(), '.kith', 'keys')
}

async function deriveKey (passphrase: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 }
  return await new Promise((resolve, reject) => {
    scrypt(passphrase.normalize('NFC'), salt, KEY_BYTES, opts, (err, key) => { if (err !== null) reject(err); else resolve(key) })
  })
}

/** The bytes GCM authenticates beside the seed: the file's public identity. */
function aad (name: string, pub: string, x25519: string): Buffer {
  return Buffer.from(`kith-keystore-v1:${name}:${pub}:${x25519}`, 'utf8')
}

function publicInfo (file: KeyFile, path: string): KeyInfo {
  return { name: file.name, pub_key: file.pub_key, address: file.address, x25519_pub: file.x25519_pub, created_at: file.created_at, file: path }
}

export class Keystore {
  constructor (readonly dir: string) {}

  private pathOf (name: string): string {
    return join(this.dir, `${name}.json`)
  }

  async list (): Promise<KeyInfo[]> {
    let names: string[]
    try {
      names = await readdir(this.dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    const out: KeyInfo[] = []
    for (const entry of names.filter((n) => n.endsWith('.json')).sort()) {
      const path = join(this.dir, entry)
      out.push(publicInfo(await this.readFile(path), path))
    }
    return out
  }

  private async readFile (path: string): Promise<KeyFile> {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError('KEY_NOT_FOUND', `no key file ${path}`)
      throw err
    }
    const file = JSON.parse(text) as KeyFile
    if (file.version !== 1 || file.crypto?.kdf !== 'scrypt' || file.crypto.cipher !== 'aes-256-gcm') {
      throw new CliError('KEYSTORE_CORRUPT', `${path} is not a kith keystore file (version 1, scrypt, aes-256-gcm)`)
    }
    return file
  }

  /** The key called `name`; with no name: "default", else the only key. */
  async find (name?: string): Promise<KeyInfo> {
    const keys = await this.list()
    if (keys.length === 0) throw new CliError('NO_KEYS', `the keystore ${this.dir} holds no key; create one with \`kith keys new\``)
    if (name !== undefined) {
      const key = keys.find((k) => k.name === name)
      if (key === undefined) throw new CliError('KEY_NOT_FOUND', `no key named "${name}" in ${this.dir} (keys: ${keys.map((k) => k.name).join(', ')})`)
      return key
    }
    const fallback = keys.find((k) => k.name === 'default') ?? (keys.length === 1 ? keys[0] : undefined)
    if (fallback === undefined) throw new CliError('KEY_AMBIGUOUS', `the keystore holds several keys (${keys.map((k) => k.name).join(', ')}); choose one with --key NAME or KITH_KEY`)
    return fallback
  }

  async create (passphrase: string, opts: { name?: string, seed?: Uint8Array, now?: Date } = {}): Promise<KeyInfo> {
    if (passphrase === '') throw new CliError('BAD_PASSPHRASE', 'the passphrase must not be empty')
    const existing = await this.list()
    const keyPair = opts.seed !== undefined ? keyPairFromSeed(opts.seed) : generateKeyPair()
    const pub = toHex(keyPair.publicKey)
    const name = opts.name ?? (existing.length === 0 ? 'default' : pub.slice(0, 8))
    if (!NAME_RE.test(name)) throw new CliError('BAD_NAME', `key name "${name}" must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`)
    if (existing.some((k) => k.name === name)) throw new CliError('KEY_EXISTS', `a key named "${name}" already exists in ${this.dir}`)
    const account = accountFrom(keyPair)
    const x25519 = toHex(sealKeyFromEd25519(keyPair.secretKey).publicKey)
    const salt = randomBytes(32)
    const iv = randomBytes(12)
    const key = await deriveKey(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    cipher.setAAD(aad(name, pub, x25519))
    const ciphertext = Buffer.concat([cipher.update(seedOf(keyPair)), cipher.final()])
    const file: KeyFile = {
      version: 1,
      name,
      pub_key: pub,
      address: account.address,
      x25519_pub: x25519,
      created_at: (opts.now ?? new Date()).toISOString(),
      crypto: {
        kdf: 'scrypt',
        kdfparams: { n: SCRYPT_N, r: SCRYPT_R, p: SCRYPT_P, dklen: KEY_BYTES, salt: salt.toString('hex') },
        cipher: 'aes-256-gcm',
        iv: iv.toString('hex'),
        ciphertext: ciphertext.toString('hex'),
        tag: cipher.getAuthTag().toString('hex')
      }
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    // mkdir leaves an existing directory as it is: tighten it either way
    await chmod(this.dir, 0o700)
    const path = this.pathOf(name)
    await writeFile(path, JSON.stringify(file, null, 2) + '\n', { mode: 0o600, flag: 'wx' })
    return publicInfo(file, path)
  }

  async unlock (info: KeyInfo, passphrase: string): Promise<UnlockedKey> {
    const file = await this.readFile(info.file)
    const { kdfparams: k, iv, ciphertext, tag } = file.crypto
    const key = await deriveKey(passphrase, Buffer.from(k.salt, 'hex'), k.n, k.r, k.p)
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'hex'))
    decipher.setAAD(aad(file.name, file.pub_key, file.x25519_pub))
    decipher.setAuthTag(Buffer.from(tag, 'hex'))
    let seed: Buffer
    try {
      seed = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'hex')), decipher.final()])
    } catch {
      throw new CliError('WRONG_PASSPHRASE', `wrong passphrase for key "${file.name}" (${info.file} could not be decrypted); check KITH_PASSPHRASE`)
    }
    const keyPair = keyPairFromSeed(seed)
    const account = accountFrom(keyPair)
    if (account.pub !== file.pub_key) throw new CliError('KEYSTORE_CORRUPT', `${info.file}: the decrypted seed does not give pub_key ${file.pub_key}`)
    return { info: publicInfo(file, info.file), account, mailbox: sealKeyFromEd25519(keyPair.secretKey) }
  }
}
