import type { Clock } from '../lib/clock.js';
import type { OutputFiles } from '../store/files/output-files.js';
import type { Store } from '../store/store.js';
import type { Catalog } from './catalog/catalog.js';
import { IdentityService } from './identity.js';
import type { IdentityLimits } from './identity.js';
import { JobRuns } from './job-runs.js';
import type { RunPolicy } from './job-runs.js';
import { JobSignals } from './job-signals.js';
import { JobService } from './jobs.js';

export interface Services {
  readonly identity: IdentityService;
  readonly jobs: JobService;
  readonly runs: JobRuns;
  readonly signals: JobSignals;
  readonly outputs: OutputFiles;
  readonly catalog: Catalog;
  readonly clock: Clock;
}

export interface ServiceOptions {
  /** Limits given to newly created workspaces. */
  readonly limits: IdentityLimits;
  readonly outputs: OutputFiles;
  readonly runPolicy: RunPolicy;
}

export function createServices(store: Store, catalog: Catalog, clock: Clock, opts: ServiceOptions): Services {
  const signals = new JobSignals();
  return {
    identity: new IdentityService(store, clock, opts.limits),
    jobs: new JobService(store, clock, signals, opts.outputs),
    runs: new JobRuns(store, clock, signals, opts.runPolicy),
    signals,
    outputs: opts.outputs,
    catalog,
    clock,
  };
}
