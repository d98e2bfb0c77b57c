/** The only source of time in domain code, so tests can stand on either side of a date. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

export const systemClock: Clock = Object.freeze({ nowMs: () => Date.now() });

/** A clock that moves only when told to; for tests and simulations. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string | number) {
    this.#ms = new Date(start).getTime();
  }
  nowMs(): number {
    return this.#ms;
  }
  set(to: Date | string | number): void {
    this.#ms = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}
