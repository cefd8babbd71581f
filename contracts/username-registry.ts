// The well-known username registry, deployed at genesis under the ABI name `username_registry`.
//
// register ["<name>"]  with exactly 10,000 µT attached (kept by the registry, never refunded):
//                      names are 4-32 characters of a-z, 0-9 and _ after ASCII case folding
//                      (A-Z become a-z); one name per address, one owner per name.
// release              no arguments, nothing attached: frees the caller's name.
// transfer ["<pubkey>"] nothing attached: moves the caller's name to a pubkey that has none.
// owner_of ["<name>"], name_of ["<pubkey>"]: read-only lookups (return '' when there is none).
//
// Storage (plain UTF-8): "name:<username>" -> owner pubkey (64 hex), "addr:<pubkey>" -> username.
import { argCount, argString, isPubkeyHex, attachedAmount, caller, fail, log, setReturn, storageDelete, storageGet, storageSet } from "./sdk/kith"

const REGISTER_FEE: u64 = 10000
const MIN_CHARS = 4
const MAX_CHARS = 32

/** The username after ASCII case folding, or a failed call if it breaks the rules. */
function normalize(raw: string): string {
  if (raw.length < MIN_CHARS || raw.length > MAX_CHARS) fail("username must be 4 to 32 characters")
  let out = ""
  for (let i = 0; i < raw.length; i++) {
    let c = raw.charCodeAt(i)
    if (c >= 65 && c <= 90) c += 32
    const ok = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 95
    if (!ok) fail("username may only contain a-z, 0-9 and _")
    out += String.fromCharCode(c)
  }
  return out
}

export function register(): void {
  if (attachedAmount() != REGISTER_FEE) fail("register needs exactly 10000 uT attached")
  if (argCount() != 1) fail("register takes one argument: the username")
  const name = normalize(argString(0))
  const owner = caller()
  if (storageGet("addr:" + owner) != null) fail("this address already has a username")
  if (storageGet("name:" + name) != null) fail("username is taken")
  storageSet("name:" + name, owner)
  storageSet("addr:" + owner, name)
  log("register " + name + " " + owner)
}

export function release(): void {
  if (attachedAmount() != 0) fail("release takes no payment")
  if (argCount() != 0) fail("release takes no arguments")
  const owner = caller()
  const name = storageGet("addr:" + owner)
  if (name == null) fail("this address has no username")
  storageDelete("name:" + name!)
  storageDelete("addr:" + owner)
  log("release " + name! + " " + owner)
}

export function transfer(): void {
  if (attachedAmount() != 0) fail("transfer takes no payment")
  if (argCount() != 1) fail("transfer takes one argument: the new owner's pubkey")
  const to = argString(0)
  if (!isPubkeyHex(to)) fail("new owner must be 64 lowercase hex characters")
  const owner = caller()
  const name = storageGet("addr:" + owner)
  if (name == null) fail("this address has no username")
  if (storageGet("addr:" + to) != null) fail("the new owner already has a username")
  storageSet("name:" + name!, to)
  storageDelete("addr:" + owner)
  storageSet("addr:" + to, name!)
  log("transfer " + name! + " " + owner + " " + to)
}

export function owner_of(): void {
  if (argCount() != 1) fail("owner_of takes one argument: the username")
  const owner = storageGet("name:" + normalize(argString(0)))
  setReturn(owner == null ? "" : owner)
}

export function name_of(): void {
  if (argCount() != 1) fail("name_of takes one argument: the pubkey")
  const name = storageGet("addr:" + argString(0))
  setReturn(name == null ? "" : name)
}
