// Room services/remote/: the server side of the remote-worker protocol (/worker/v1, docs/workers.md): worker tokens
// and their model patterns, claims, progress, inputs, uploads, completion, and the maintenance of
// leases. The remote client that speaks it lives in src/worker/remote/.
// May import from services/: jobs, assets, common (and what jobs may import); test/unit/layers.test.ts holds the order.
import type { Log } from '../../lib/log.js';
import type { QueueStore } from '../../store/store.js';
import { RemoteClaims } from './remote-claims.js';
import { RemoteInputs } from './remote-inputs.js';
import type { InputLoad } from './remote-inputs.js';
import { RemoteMaintenance } from './remote-maintenance.js';
import type { RemoteDeps } from './remote-jobs.js';
import { RemoteRuns } from './remote-runs.js';
import { RemoteUploads } from './remote-upload.js';
import type { Services } from '../services.js';

/** The worker protocol's use cases (docs/workers.md), as the HTTP routes call them. */
export interface RemoteProtocol {
  readonly claims: RemoteClaims;
  readonly runs: RemoteRuns;
  readonly uploads: RemoteUploads;
  readonly inputs: RemoteInputs;
  /** Lease and timeout upkeep of remote-bound jobs; started and stopped with the HTTP app. */
  readonly maintenance: RemoteMaintenance;
}

export interface RemoteOptions {
  /** The longest wait between two looks at the queue (`poll_interval_ms`): claims and maintenance. */
  readonly pollMs: number;
  /** `worker_output_max_bytes`. */
  readonly outputMaxBytes: number;
  /** Loads an input as in-process runs do: assets from the store, else the guarded fetch. */
  readonly loadInput: InputLoad;
  readonly log: Log;
}

/** The protocol over a process's services; the runtime builds it with the HTTP app. */
export function createRemoteProtocol(
  services: Pick<Services, 'runs' | 'bindings' | 'routes' | 'outputs' | 'clock' | 'catalog' | 'signals' | 'workerTokens' | 'styles'>,
  queue: Pick<QueueStore, 'overdueJobs'>,
  opts: RemoteOptions,
): RemoteProtocol {
  const deps: RemoteDeps = { runs: services.runs, remote: services.bindings.remote, outputs: services.outputs, clock: services.clock, log: opts.log };
  const { clock } = services;
  return {
    claims: new RemoteClaims({
      ...deps,
      catalog: services.catalog,
      signals: services.signals,
      tokens: services.workerTokens,
      loadStyle: (id) => services.styles.artifact(id),
      pollMs: opts.pollMs,
      bindings: services.bindings,
      routes: services.routes,
    }),
    runs: new RemoteRuns(deps),
    uploads: new RemoteUploads(deps, opts.outputMaxBytes),
    inputs: new RemoteInputs(services.runs, services.catalog, services.bindings.remote, services.workerTokens, opts.loadInput, () => clock.nowMs()),
    maintenance: new RemoteMaintenance(deps, queue, opts.pollMs, services.workerTokens),
  };
}
