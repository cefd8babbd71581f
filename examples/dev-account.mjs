// The dev account of a dev node (npm start) and a client for that node, for the other examples.
// KITH_HOME names the node's home (default: .kith in the repository, where npm start puts it),
// KITH_NODE its URL (default http://localhost:8080).
import { Buffer } from 'node:buffer'
import { readFileSync } from 'node:fs'
import { fileURLToPath, URL } from 'node:url'
import { accountFrom, keyPairFromSeed, KithClient } from '../dist/src/client/index.js'

const home = process.env.KITH_HOME ?? fileURLToPath(new URL('../.kith', import.meta.url))
const dev = JSON.parse(readFileSync(`${home}/dev_account.json`, 'utf8'))
export const me = accountFrom(keyPairFromSeed(Buffer.from(dev.seed, 'hex')))
export const nodeUrl = process.env.KITH_NODE ?? 'http://localhost:8080'
export const client = new KithClient({ baseUrl: nodeUrl })
