/**
 * Walks one function body in binaryen IR: refuses what the VM does not run (floats, SIMD,
 * atomics, tables ops, references, exceptions, tail calls, multi-value) and measures the gas
 * regions (the function entry and each loop) that prepare.ts instruments.
 */
import type Binaryen from 'binaryen'
import { MAX_EXPRESSION_DEPTH } from './limits.js'

type BinaryenApi = typeof Binaryen

export interface BodyWalk {
  /** IR nodes of the body outside any loop: charged at function entry. */
  entryCost: number
  /** Each loop with the IR nodes of its body outside nested loops: charged per iteration. */
  loops: Array<{ expr: number, cost: number }>
  copies: number[]
  fills: number[]
  grows: number[]
}

/** A refusal with a plain reason; prepare.ts prefixes the function name. */
export class Refused extends Error {}

/** The child expressions of an allowed expression; throws Refused for anything else. */
function children (binaryen: BinaryenApi, expr: number, id: number): number[] {
  const Ids = binaryen
  switch (id) {
    case Ids.NopId: case Ids.UnreachableId: case Ids.LocalGetId: case Ids.GlobalGetId:
    case Ids.ConstId: case Ids.MemorySizeId:
      return []
    case Ids.BlockId: return (binaryen.getExpressionInfo(expr) as Binaryen.BlockInfo).children
    case Ids.IfId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.IfInfo
      return [i.condition, i.ifTrue, i.ifFalse]
    }
    case Ids.LoopId: return [(binaryen.getExpressionInfo(expr) as Binaryen.LoopInfo).body]
    case Ids.BreakId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.BreakInfo
      return [i.condition, i.value]
    }
    case Ids.SwitchId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.SwitchInfo
      return [i.condition, i.value]
    }
    case Ids.CallId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.CallInfo
      if (i.isReturn) throw new Refused('tail calls are not allowed')
      return i.operands
    }
    case Ids.CallIndirectId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.CallIndirectInfo
      if (i.isReturn) throw new Refused('tail calls are not allowed')
      return [...i.operands, i.target]
    }
    case Ids.LocalSetId: return [(binaryen.getExpressionInfo(expr) as Binaryen.LocalSetInfo).value]
    case Ids.GlobalSetId: return [(binaryen.getExpressionInfo(expr) as Binaryen.GlobalSetInfo).value]
    case Ids.LoadId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.LoadInfo
      if (i.isAtomic) throw new Refused('atomics are not allowed')
      return [i.ptr]
    }
    case Ids.StoreId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.StoreInfo
      if (i.isAtomic) throw new Refused('atomics are not allowed')
      return [i.ptr, i.value]
    }
    case Ids.MemoryCopyId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.MemoryCopyInfo
      return [i.dest, i.source, i.size]
    }
    case Ids.MemoryFillId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.MemoryFillInfo
      return [i.dest, i.value, i.size]
    }
    case Ids.MemoryGrowId: return [(binaryen.getExpressionInfo(expr) as Binaryen.MemoryGrowInfo).delta]
    case Ids.UnaryId: return [(binaryen.getExpressionInfo(expr) as Binaryen.UnaryInfo).value]
    case Ids.BinaryId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.BinaryInfo
      return [i.left, i.right]
    }
    case Ids.SelectId: {
      const i = binaryen.getExpressionInfo(expr) as Binaryen.SelectInfo
      return [i.ifTrue, i.ifFalse, i.condition]
    }
    case Ids.DropId: return [(binaryen.getExpressionInfo(expr) as Binaryen.DropInfo).value]
    case Ids.ReturnId: return [(binaryen.getExpressionInfo(expr) as Binaryen.ReturnInfo).value]
    case Ids.AtomicRMWId: case Ids.AtomicCmpxchgId: case Ids.AtomicWaitId: case Ids.AtomicNotifyId: case Ids.AtomicFenceId:
      throw new Refused('atomics are not allowed')
    case Ids.SIMDExtractId: case Ids.SIMDReplaceId: case Ids.SIMDShuffleId: case Ids.SIMDTernaryId:
    case Ids.SIMDShiftId: case Ids.SIMDLoadId: case Ids.SIMDLoadStoreLaneId:
      throw new Refused('SIMD is not allowed')
    case Ids.MemoryInitId: case Ids.DataDropId:
      throw new Refused('passive data segments (memory.init, data.drop) are not allowed')
    default:
      throw new Refused(`instruction kind ${id} is not allowed (only integer MVP, sign extension and memory.copy/fill)`)
  }
}

/** Walks `body` iteratively (a deep module cannot overflow the host stack). */
export function walkFunctionBody (binaryen: BinaryenApi, body: number): BodyWalk {
  const walk: BodyWalk = { entryCost: 0, loops: [], copies: [], fills: [], grows: [] }
  const allowedTypes = new Set([binaryen.i32, binaryen.i64, binaryen.none, binaryen.unreachable])
  // region -1 is the function entry; n ≥ 0 is walk.loops[n]
  const stack: Array<{ expr: number, region: number, depth: number }> = [{ expr: body, region: -1, depth: 0 }]
  while (stack.length > 0) {
    const { expr, region, depth } = stack.pop() as { expr: number, region: number, depth: number }
    if (depth > MAX_EXPRESSION_DEPTH) throw new Refused(`expressions nested deeper than ${MAX_EXPRESSION_DEPTH}`)
    const type = binaryen.getExpressionType(expr)
    if (!allowedTypes.has(type)) throw new Refused('only i32 and i64 values are allowed (no floats, vectors, references or tuples)')
    if (region < 0) walk.entryCost++
    else walk.loops[region].cost++
    const id = binaryen.getExpressionId(expr)
    let childRegion = region
    if (id === binaryen.LoopId) {
      childRegion = walk.loops.length
      walk.loops.push({ expr, cost: 0 })
    } else if (id === binaryen.MemoryCopyId) walk.copies.push(expr)
    else if (id === binaryen.MemoryFillId) walk.fills.push(expr)
    else if (id === binaryen.MemoryGrowId) walk.grows.push(expr)
    for (const child of children(binaryen, expr, id)) {
      if (child !== 0) stack.push({ expr: child, region: childRegion, depth: depth + 1 })
    }
  }
  return walk
}
