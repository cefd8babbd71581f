/** The VM on the caller's thread: for simulations and tests. Gas alone bounds a call here. */
import { ModuleCache, runCall } from './execute.js'
import { checkCallInput, loadBinaryen } from './load.js'
import { prepareModule } from './prepare.js'
import type { ContractVm } from './types.js'

export async function createInlineVm (): Promise<ContractVm> {
  const binaryen = await loadBinaryen()
  const cache = new ModuleCache()
  return {
    prepare: (wasm) => prepareModule(binaryen, wasm),
    prepareAsync: async (wasm) => prepareModule(binaryen, wasm),
    call: (input, storage) => {
      checkCallInput(input)
      return runCall(cache, input, storage)
    },
    close: async () => {}
  }
}
