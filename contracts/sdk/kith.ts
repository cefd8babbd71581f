// The kith contract SDK for AssemblyScript: thin wrappers over the host ABI (docs/contracts.md).
// Contracts must not need a start function (the VM refuses one): keep globals constant, and use
// memory.data for static buffers.

@external("kith", "storage_get") declare function storage_get(kp: usize, kl: usize, out: usize, cap: usize): i32
@external("kith", "storage_set") declare function storage_set(kp: usize, kl: usize, vp: usize, vl: usize): void
@external("kith", "storage_delete") declare function storage_delete(kp: usize, kl: usize): void
@external("kith", "caller") declare function caller_(out: usize): void
@external("kith", "contract_id_len") declare function contract_id_len(): i32
@external("kith", "contract_id") declare function contract_id(out: usize): void
@external("kith", "attached_amount") declare function attached_amount(): u64
@external("kith", "balance") declare function balance_(): u64
@external("kith", "transfer") declare function transfer_(tp: usize, tl: usize, amount: u64): void
@external("kith", "emit_log") declare function emit_log(ptr: usize, len: usize): void
@external("kith", "args_size") declare function args_size(): i32
@external("kith", "args_read") declare function args_read(out: usize): void
@external("kith", "arg_count") declare function arg_count(): i32
@external("kith", "arg_len") declare function arg_len(i: i32): i32
@external("kith", "arg_read") declare function arg_read(i: i32, out: usize): void
@external("kith", "block_height") declare function block_height(): u64
@external("kith", "set_return") declare function set_return(ptr: usize, len: usize): void

/** Largest stored value (MAX_VALUE_BYTES): storage reads land here first. */
const VALUE_CAP: usize = 4096
const scratch: usize = memory.data(4096)

function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s)
}

// ---- storage ----

/** The value stored under `key`, or null. */
export function storageGetBytes(key: string): Uint8Array | null {
  const k = utf8(key)
  const len = storage_get(changetype<usize>(k), k.byteLength, scratch, VALUE_CAP)
  if (len < 0) return null
  const out = new Uint8Array(len)
  memory.copy(out.dataStart, scratch, <usize>len)
  return out
}

/** The UTF-8 text stored under `key`, or null. */
export function storageGet(key: string): string | null {
  const k = utf8(key)
  const len = storage_get(changetype<usize>(k), k.byteLength, scratch, VALUE_CAP)
  if (len < 0) return null
  return String.UTF8.decodeUnsafe(scratch, <usize>len)
}

export function storageSetBytes(key: string, value: Uint8Array): void {
  const k = utf8(key)
  storage_set(changetype<usize>(k), k.byteLength, value.dataStart, value.byteLength)
}

export function storageSet(key: string, value: string): void {
  const k = utf8(key)
  const v = utf8(value)
  storage_set(changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength)
}

export function storageDelete(key: string): void {
  const k = utf8(key)
  storage_delete(changetype<usize>(k), k.byteLength)
}

/** A u64 stored as 8 bytes little-endian (0 when missing), the form the node shows as value_u64. */
export function storageGetU64(key: string): u64 {
  const k = utf8(key)
  const len = storage_get(changetype<usize>(k), k.byteLength, scratch, VALUE_CAP)
  if (len != 8) return 0
  return load<u64>(scratch)
}

export function storageSetU64(key: string, value: u64): void {
  const k = utf8(key)
  store<u64>(scratch, value)
  storage_set(changetype<usize>(k), k.byteLength, scratch, 8)
}

// ---- context ----

/** The signer of the transaction: 64 lowercase hex characters. */
export function caller(): string {
  caller_(scratch)
  return String.UTF8.decodeUnsafe(scratch, 64)
}

export function contractId(): string {
  const len = contract_id_len()
  contract_id(scratch)
  return String.UTF8.decodeUnsafe(scratch, <usize>len)
}

/** µT attached to this call (already in the contract's balance). */
export function attachedAmount(): u64 {
  return attached_amount()
}

/** The contract's balance in µT, less the transfers made so far in this call. */
export function balance(): u64 {
  return balance_()
}

export function blockHeight(): u64 {
  return block_height()
}

// ---- effects ----

/** Sends `amount` µT from the contract to `to` (64 hex); traps beyond the balance. */
export function transfer(to: string, amount: u64): void {
  const t = utf8(to)
  transfer_(changetype<usize>(t), t.byteLength, amount)
}

export function log(message: string): void {
  const m = utf8(message)
  emit_log(changetype<usize>(m), m.byteLength)
}

export function setReturn(value: string): void {
  const v = utf8(value)
  set_return(changetype<usize>(v), v.byteLength)
}

export function setReturnBytes(value: Uint8Array): void {
  set_return(value.dataStart, value.byteLength)
}

/** Ends the call as failed with `message` (no writes, logs or transfers are kept). */
export function fail(message: string): void {
  abort(message)
}

/** True for a pubkey as the node writes them: 64 lowercase hex characters. */
export function isPubkeyHex(s: string): bool {
  if (s.length != 64) return false
  for (let i = 0; i < 64; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

// ---- arguments ----

export function argCount(): i32 {
  return arg_count()
}

/** Argument `i`: a JSON string's text, or any other value's JSON text. */
export function argString(i: i32): string {
  const len = arg_len(i)
  const buf = new ArrayBuffer(len)
  arg_read(i, changetype<usize>(buf))
  return String.UTF8.decode(buf)
}

/** Argument `i` as a u64 written in decimal digits (a JSON number or string); fails otherwise. */
export function argU64(i: i32): u64 {
  const s = argString(i)
  if (s.length == 0 || s.length > 20) fail("argument " + i.toString() + " is not a u64")
  let v: u64 = 0
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j)
    if (c < 48 || c > 57) fail("argument " + i.toString() + " is not a u64")
    const next = v * 10 + <u64>(c - 48)
    if (next / 10 != v) fail("argument " + i.toString() + " is not a u64")
    v = next
  }
  return v
}

/** The raw JSON text of the arguments array ('' when none were given). */
export function argsJson(): string {
  const len = args_size()
  const buf = new ArrayBuffer(len)
  args_read(changetype<usize>(buf))
  return String.UTF8.decode(buf)
}
