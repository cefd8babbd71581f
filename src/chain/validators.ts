/** The validator set as chain state: genesis powers, the active set, and one scheduled change. */
export interface ValidatorEntry {
  pub_key: string
  power: number
  name?: string
}

export interface ValidatorSetState {
  /** every identity the genesis allows to validate, with its genesis power (0 for candidates) */
  base: ValidatorEntry[]
  active: ValidatorEntry[]
  /** a set that takes over from `height` on */
  pending: { height: number, validators: ValidatorEntry[] } | null
}

/** The set that decides `height`. */
export function validatorSetAt (state: ValidatorSetState, height: number): ValidatorEntry[] {
  return state.pending !== null && state.pending.height <= height ? state.pending.validators : state.active
}
