// A small token. `init` makes the caller its creator (once); the creator may `mint` ["<to>", amount];
// anyone may `transfer` ["<to>", amount] of their own balance; `balance_of` ["<pubkey>"] returns a
// balance in decimal. Balances are u64 (8 bytes little-endian) under "bal:<pubkey>".
import { argCount, argString, argU64, isPubkeyHex, caller, fail, log, setReturn, storageGet, storageGetU64, storageSet, storageSetU64 } from "../sdk/kith"

function recipient(): string {
  if (argCount() != 2) fail("expected [\"<to pubkey>\", amount]")
  const to = argString(0)
  if (!isPubkeyHex(to)) fail("recipient must be 64 lowercase hex characters")
  return to
}

export function init(): void {
  if (storageGet("creator") != null) fail("already initialised")
  storageSet("creator", caller())
  log("init " + caller())
}

export function mint(): void {
  const creator = storageGet("creator")
  if (creator == null || creator != caller()) fail("only the creator may mint")
  const to = recipient()
  const amount = argU64(1)
  const supply = storageGetU64("supply")
  if (supply + amount < supply) fail("supply overflow")
  storageSetU64("supply", supply + amount)
  storageSetU64("bal:" + to, storageGetU64("bal:" + to) + amount)
  log("mint " + to + " " + amount.toString())
}

export function transfer(): void {
  const to = recipient()
  const amount = argU64(1)
  const from = caller()
  const have = storageGetU64("bal:" + from)
  if (amount > have) fail("insufficient token balance")
  storageSetU64("bal:" + from, have - amount)
  storageSetU64("bal:" + to, storageGetU64("bal:" + to) + amount)
  log("transfer " + from + " " + to + " " + amount.toString())
}

export function balance_of(): void {
  if (argCount() != 1) fail("expected [\"<pubkey>\"]")
  setReturn(storageGetU64("bal:" + argString(0)).toString())
}
