import { notFound } from '../../domain/error-catalogue.js';
import { checkSandboxMarkers } from '../../domain/sandbox-markers.js';
import type { Clock } from '../../lib/clock.js';
import { isPlainObject } from '../../lib/plain-object.js';
import { applyAliases } from '../../models/aliases.js';
import { isAvailable } from '../../models/catalog.js';
import type { Catalog, CatalogEntry } from '../../models/catalog.js';
import { sunsetError } from '../../models/deprecation.js';
import type { BodyValidator } from '../../models/validation.js';

/**
 * What a model and a request body must be before anything is priced or stored: one rule for the
 * job's creation (generation.ts) and its quote (quotes.ts), so a quote refuses exactly the bodies
 * POST /generate refuses, with the same messages.
 */
export class ModelRequests {
  readonly #catalog: Catalog;
  readonly #clock: Clock;
  readonly #sandbox: boolean;

  constructor(catalog: Catalog, clock: Clock, opts: { sandbox?: boolean } = {}) {
    this.#catalog = catalog;
    this.#clock = clock;
    this.#sandbox = opts.sandbox === true;
  }

  /**
   * The model, if it takes requests now; a retired or sunset model is model_unavailable. A
   * transport may call this before it reads the body, so a sunset answers before anything else.
   */
  available(model: string, publicUrl: string): CatalogEntry {
    const entry = this.#catalog.get(model);
    if (!entry) throw notFound(`model '${model}' not found`);
    // Only a deprecated model can be unavailable (a retired one is deprecated too: catalog.ts).
    if (entry.deprecation && !isAvailable(entry, this.#clock.nowMs())) {
      throw sunsetError(entry.path, entry.deprecation, publicUrl);
    }
    return entry;
  }

  /**
   * The body of a request to an available `entry`: aliases renamed (or refused after their
   * sunset), strict validation with defaults filled in, and in sandbox mode the prompt's markers
   * (a bad one is a 400 now, not a surprise later).
   */
  checkedBody(entry: CatalogEntry, received: unknown): Record<string, unknown> {
    let body = received;
    if (entry.aliases.length > 0 && isPlainObject(body)) {
      body = applyAliases(body, entry.aliases, this.#catalog.aliasSunsetDate, this.#catalog.aliasSunsetMs, this.#clock.nowMs());
    }
    // Present on every entry that takes requests (catalog.ts), and `available` let only those through.
    const validate: BodyValidator = entry.validate!;
    validate(body);
    if (this.#sandbox) checkSandboxMarkers(body);
    return body;
  }
}
