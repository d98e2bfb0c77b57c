import type { CircuitState } from '../../engines/circuit.js';

/** An engine's state as /readyz and GET /models/{id} show it: its circuit, or `unknown` (see EngineHealth). */
export type EngineState = CircuitState | 'unknown';

/**
 * Where the API learns the circuits of this process's engines (docs/routing.md, "Circuits"). The
 * engines are built lazily, by the workers that run jobs, so this is filled in then; until it is
 * (an API-only process, `serve --role api`), and for a remote pool, which has no circuit here,
 * every state is `unknown`.
 */
export class EngineHealth {
  #states: (() => ReadonlyMap<string, CircuitState>) | undefined;

  /** Reads the circuits from now on (the engine router's `states`). */
  watch(states: () => ReadonlyMap<string, CircuitState>): void {
    this.#states = states;
  }

  /** Each engine's circuit in this process, by id; undefined while no engines run here. */
  states(): ReadonlyMap<string, CircuitState> | undefined {
    return this.#states?.();
  }

  /** The state of each of `engines`, in their order. */
  of(engines: readonly string[]): { name: string; state: EngineState }[] {
    const states = this.states();
    return engines.map((name) => ({ name, state: states?.get(name) ?? 'unknown' }));
  }
}
