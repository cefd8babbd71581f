// The metering benchmark's work loop (bench/contracts-vm.ts): n rounds of integer hashing.
import { argU64, setReturn } from "../sdk/kith"

export function work(): void {
  const n = argU64(0)
  let h: u64 = 1469598103934665603
  for (let i: u64 = 0; i < n; i++) {
    h = (h ^ i) * 1099511628211
    h = h ^ (h >> 29)
  }
  setReturn(h.toString())
}
