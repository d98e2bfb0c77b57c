import type { Mediagen, Model } from '../../../../packages/client/src/index.js';

/** The catalog (GET /models), read once per signed-in client: it changes only with the server's config. */
const catalogs = new WeakMap<Mediagen, Promise<Model[]>>();

export function catalogOf(mg: Mediagen): Promise<Model[]> {
  let p = catalogs.get(mg);
  if (!p) {
    p = mg.models.list();
    catalogs.set(mg, p);
    // A failed read is not kept: the next page to ask tries again.
    p.catch(() => catalogs.delete(mg));
  }
  return p;
}
