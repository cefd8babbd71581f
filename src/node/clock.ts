/** The node's time source, injected so that tests and simulations control it. */
export interface Clock {
  now (): number
}

export const systemClock: Clock = { now: () => Date.now() }
