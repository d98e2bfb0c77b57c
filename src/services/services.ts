import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/store.js';
import type { Catalog } from './catalog/catalog.js';
import { IdentityService } from './identity.js';
import type { IdentityLimits } from './identity.js';
import { JobService } from './jobs.js';

export interface Services {
  readonly identity: IdentityService;
  readonly jobs: JobService;
  readonly catalog: Catalog;
  readonly clock: Clock;
}

export function createServices(store: Store, catalog: Catalog, clock: Clock, limits: IdentityLimits): Services {
  return {
    identity: new IdentityService(store, clock, limits),
    jobs: new JobService(store, clock),
    catalog,
    clock,
  };
}
