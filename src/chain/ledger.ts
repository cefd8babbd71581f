/** Balance moves on a state overlay. */
import { KithError } from '../errors/index.js'
import { StateKeys, type StateOverlay, type StateReader } from './state.js'

export function balanceOf (state: StateReader, pubkey: string): number {
  const balance = state.get(StateKeys.balance(pubkey))
  return typeof balance === 'number' ? balance : 0
}

export function debit (state: StateOverlay, pubkey: string, amount: number, what: string): void {
  if (amount === 0) return
  const balance = balanceOf(state, pubkey)
  if (balance < amount) {
    throw new KithError('TX_INSUFFICIENT_FUNDS', `insufficient funds: balance ${balance} µT does not cover ${what}`)
  }
  state.set(StateKeys.balance(pubkey), balance - amount)
}

export function credit (state: StateOverlay, pubkey: string, amount: number): void {
  if (amount === 0 || pubkey === '') return
  const next = balanceOf(state, pubkey) + amount
  if (!Number.isSafeInteger(next)) throw new KithError('TX_INVALID', 'balance would exceed the largest exact amount')
  state.set(StateKeys.balance(pubkey), next)
}

export function mint (state: StateOverlay, pubkey: string, amount: number): void {
  credit(state, pubkey, amount)
  state.set(StateKeys.supply, state.getNumber(StateKeys.supply) + amount)
}
