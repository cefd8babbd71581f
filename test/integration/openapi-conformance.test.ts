/**
 * Real answers against the OpenAPI document: every GET operation the document lists is called
 * on a running node that holds a little of everything (a confirmed transfer, an identity, an
 * envelope), with its path parameters filled from that data, and each 200 answer is validated
 * against the response schema the document gives, by an independent JSON Schema 2020-12
 * validator (ajv), so the document cannot drift from what the node sends.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { callContract, newAccount, type Account } from '../../src/client/index.js'
import { USERNAME_FEE_UT, USERNAME_REGISTRY_ID } from '../../src/contracts/wellknown.js'
import { http, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

interface Operation {
  parameters?: Array<{ name: string, in: string, required?: boolean }>
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>
}

const pointer = (...parts: string[]): string => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

describe('answers validate against the OpenAPI document', () => {
  let node: NodeProcess
  let alice: Account
  let txId: string

  before(async () => {
    alice = newAccount()
    node = await startNode({ alloc: [{ pub: alice.pub, amountUt: 10_000_000 }] })
    // a username registration: its detail carries gas_used and call_result, and the registry a value and a log
    const tx = callContract(alice, USERNAME_REGISTRY_ID, 'register', ['alice_01'], { amount: USERNAME_FEE_UT })
    txId = tx.id
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: tx })).status, 200)
    await waitFor(async () => ((await http(node.url, 'GET', `/api/tx/${tx.id}`)).json as { status?: string }).status === 'confirmed', 20_000, { message: 'the call confirmed' })
  })

  after(async () => { await stopAllNodes() })

  test('every GET operation with a JSON schema answers what its schema says', async (t) => {
    const doc = (await http(node.url, 'GET', '/swagger/openapi.json')).json as { paths: Record<string, Record<string, Operation>> }
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
    ajv.addSchema(doc as object, 'kith-openapi')
    const values: Record<string, string> = {
      id: txId, pubkey: alice.pub, pubkey_or_address: alice.pub, master_pub: alice.pub, pub: '00'.repeat(32), height: '1', author: alice.pub, tag: 'kith', key: 'name:alice_01'
    }
    // contract routes name the contract `id` too (the spec's path)
    const valuesFor = (path: string): Record<string, string> => path.startsWith('/api/contracts/') ? { ...values, id: USERNAME_REGISTRY_ID } : values
    const validated: string[] = []
    const skipped: string[] = []
    for (const [path, methods] of Object.entries(doc.paths)) {
      const op = methods.get
      if (op === undefined) continue
      const schema = op.responses['200']?.content?.['application/json']?.schema
      if (schema === undefined) continue
      let url = path
      let fillable = true
      const values = valuesFor(path)
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') {
          if (values[p.name] === undefined) fillable = false
          else url = url.replace(`{${p.name}}`, values[p.name])
        } else if (p.in === 'query' && p.required === true) {
          if (values[p.name] === undefined) fillable = false
          else url += `${url.includes('?') ? '&' : '?'}${p.name}=${values[p.name]}`
        }
      }
      if (!fillable) { skipped.push(path); continue }
      const res = await http(node.url, 'GET', url)
      if (res.status !== 200) { skipped.push(`${path} (${res.status})`); continue }
      const validate = ajv.getSchema(`kith-openapi#${pointer('', 'paths', path, 'get', 'responses', '200', 'content', 'application/json', 'schema')}`)
      assert.ok(validate !== undefined, `schema of GET ${path}`)
      assert.ok(validate(res.json), `GET ${url} does not match its documented schema: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`)
      validated.push(path)
    }
    t.diagnostic(`validated ${validated.length} GET answers; not called: ${skipped.join(', ')}`)
    // the schemas have teeth: an empty object is not a netstats answer
    const netstats = ajv.getSchema(`kith-openapi#${pointer('', 'paths', '/api/netstats', 'get', 'responses', '200', 'content', 'application/json', 'schema')}`)
    assert.equal(netstats?.({}), false)
    // the chain, relay and feed reads at least, whatever else the document lists
    for (const path of ['/api/netstats', '/api/tx/{id}', '/api/address/{pubkey}', '/api/network-info', '/api/validators', '/api/peers', '/api/well-known-version', '/api/limits', '/relay/inbox',
      '/api/well-known-contracts', '/api/contracts', '/api/contracts/{id}', '/api/contracts/{id}/state/{key}', '/api/contracts/{id}/logs']) {
      assert.ok(validated.includes(path), `GET ${path} was validated (skipped: ${skipped.join(', ')})`)
    }
  })
})
