// A counter: `increment` adds one, `get` returns the count. The count is stored under the key
// "count" as a u64 in 8 bytes little-endian, so the node's value_u64 shows it.
import { setReturn, storageGetU64, storageSetU64 } from "../sdk/kith"

export function increment(): void {
  const next = storageGetU64("count") + 1
  storageSetU64("count", next)
  setReturn(next.toString())
}

export function get(): void {
  setReturn(storageGetU64("count").toString())
}
