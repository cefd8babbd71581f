/**
 * Accounts and signed transactions: keys, ids, and building any transaction type. The account
 * and the generic builder live in the chain (src/chain/build.ts) and are re-exported here; the
 * helpers for one type each are the client's. Depends only on the chain's wire format.
 */
import { generateKeyPair, keyPairFromSeed, type KeyPair } from '../crypto/index.js'
import {
  accountFrom, addressOf, buildTx, newAccount, newTxId, DEFAULT_GAS_LIMIT, DEPLOY_BYTE_FEE, MIN_FEE,
  type Account, type BuildOptions, type Transaction, type TxType
} from '../chain/index.js'

export { addressOf, generateKeyPair, keyPairFromSeed, type KeyPair, type Transaction, type TxType }
export { accountFrom, buildTx, newAccount, newTxId, type Account, type BuildOptions }

export function transfer (from: Account, to: string, amount: number, opts: { fee?: number, memo?: string, id?: string, time?: number } = {}): Transaction {
  return buildTx(from, {
    type: 'TRANSFER', to, amount, fee: opts.fee, id: opts.id, time: opts.time, memo: opts.memo,
    payload: opts.memo === undefined ? {} : { memo: opts.memo }
  })
}

/** CALL_CONTRACT: `args` become args_json (a JSON array; '' when there are none). */
export function callContract (from: Account, contractId: string, method: string, args: unknown[] = [], opts: { amount?: number, fee?: number, gasLimit?: number, id?: string, time?: number } = {}): Transaction {
  return buildTx(from, {
    type: 'CALL_CONTRACT', amount: opts.amount ?? 0, fee: opts.fee, id: opts.id, time: opts.time,
    payload: { contract_id: contractId, method, args_json: args.length === 0 ? '' : JSON.stringify(args), gas_limit: opts.gasLimit ?? DEFAULT_GAS_LIMIT }
  })
}

/** DEPLOY_CONTRACT of a wasm module under an ABI name, at the least fee for its size unless told. */
export function deployContract (from: Account, wasm: Uint8Array, name: string, opts: { version?: string, fee?: number, id?: string, time?: number } = {}): Transaction {
  return buildTx(from, {
    type: 'DEPLOY_CONTRACT', fee: opts.fee ?? MIN_FEE + wasm.length * DEPLOY_BYTE_FEE, id: opts.id, time: opts.time,
    payload: { name, version: opts.version ?? '', code_b64: Buffer.from(wasm).toString('base64') }
  })
}
