import type { Clock } from '../lib/clock.js';
import type { OutputFiles } from '../store/files/output-files.js';
import type { Store } from '../store/store.js';
import type { Catalog } from './catalog/catalog.js';
import { BillingService } from './billing.js';
import type { PriceTable } from './catalog/prices.js';
import { IdentityService } from './identity.js';
import type { IdentityLimits } from './identity.js';
import { JobRuns } from './job-runs.js';
import type { RunPolicy } from './job-runs.js';
import { JobSignals } from './job-signals.js';
import { JobService } from './jobs.js';
import { NodeAppService } from './node-apps.js';

export interface Services {
  readonly identity: IdentityService;
  readonly jobs: JobService;
  readonly runs: JobRuns;
  readonly billing: BillingService;
  readonly nodeApps: NodeAppService;
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
  /** Prices by model path (the spec's table with the config file's overrides). */
  readonly prices: PriceTable;
}

export function createServices(store: Store, catalog: Catalog, clock: Clock, opts: ServiceOptions): Services {
  const signals = new JobSignals();
  const identity = new IdentityService(store, clock, opts.limits);
  const billing = new BillingService(store, clock, opts.prices, identity);
  return {
    identity,
    jobs: new JobService(store, clock, signals, opts.outputs, billing),
    runs: new JobRuns(store, clock, signals, opts.runPolicy, billing),
    billing,
    nodeApps: new NodeAppService(store, clock),
    signals,
    outputs: opts.outputs,
    catalog,
    clock,
  };
}
