import { ConfigError } from '../config/config.js';
import type { Config } from '../config/config.js';
import { sandboxRefusal } from '../config/sandbox-settings.js';
import { SANDBOX_DWELL_MS, SANDBOX_TIMEOUT_MS, sandboxMarkersOf } from '../domain/sandbox-markers.js';
import type { EngineBindings } from '../engines/bindings.js';
import type { Engine } from '../engines/engine.js';
import { SandboxEngine } from '../engines/sandbox-engine.js';
import type { Clock } from '../lib/clock.js';
import type { RunPolicy } from '../services/jobs/job-runs.js';

/**
 * Sandbox mode's wiring (docs/sandbox.md): the parts a `--sandbox` server runs differently. The
 * markers' rules are in domain/sandbox-markers.ts, the run's side in engines/sandbox-engine.ts.
 */

/** Refuses a sandbox server with a model bound to a remote pool, however it got bound (config/sandbox-settings.ts). */
export function checkSandboxBindings(config: Config, bindings: EngineBindings): void {
  if (!config.sandbox) return;
  const refusal = sandboxRefusal({ remoteModels: [...bindings.remote].map(([model, pool]) => [model, `remote:${pool}`] as const) });
  if (refusal) throw new ConfigError(refusal);
}

/**
 * The run policy of a sandbox server: a job sent with `[mediagen:timeout]` gets a timeout of
 * SANDBOX_TIMEOUT_MS (its model's, if shorter), so it fails through the run's real timeout in
 * seconds; and a job is claimed only once it has been `queued` for SANDBOX_DWELL_MS.
 */
export function sandboxRunPolicy(config: Config, policy: RunPolicy): RunPolicy {
  if (!config.sandbox) return policy;
  return {
    ...policy,
    minQueuedMs: SANDBOX_DWELL_MS,
    timeoutMs: (type, request) => {
      const ms = policy.timeoutMs(type, request);
      return request && sandboxMarkersOf(request)?.markers.timeout ? Math.min(ms, SANDBOX_TIMEOUT_MS) : ms;
    },
  };
}

/** The worker's engine of a sandbox server: `engine` with its statuses held and the markers acted on. */
export function sandboxEngine(config: Config, engine: Engine, clock: Clock): Engine {
  return config.sandbox ? new SandboxEngine(engine, clock) : engine;
}
