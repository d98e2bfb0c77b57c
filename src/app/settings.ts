import { ConfigError } from '../config/config.js';
import type { Config } from '../config/config.js';
import type { MediaLimits } from '../engines/media/media-limits.js';
import type { AppDeps } from '../http/app.js';
import type { Catalog } from '../models/catalog.js';
import { PriceError, buildPriceTable } from '../models/prices.js';
import type { PriceTable } from '../models/prices.js';
import type { RunPolicy } from '../services/jobs/job-runs.js';
import { isNodeAppJob, planTimeoutMs, readPlan } from '../domain/node-app-plan.js';

/**
 * The config's settings in the shapes the parts take. The composition root (runtime.ts) is their
 * one caller in production; tests that listen or check a default use them too.
 */

/** A job is given this many claims; a worker dying more often than that on one job gives up on it. */
export const MAX_ATTEMPTS = 3;

/** Where job outputs live inside the data dir (the disk output store's root). */
export const OUTPUTS_DIR = 'outputs';

export function runPolicyFor(config: Config, catalog: Catalog): RunPolicy {
  for (const model of Object.keys(config.modelTimeoutsMs)) {
    if (!catalog.get(model)?.request) throw new ConfigError(`job_timeouts_ms: unknown model '${model}'`);
  }
  // A custom model's declared timeout_ms is its default; job_timeouts_ms names the exceptions.
  const timeoutOf = (model: string) => config.modelTimeoutsMs[model] ?? catalog.get(model)?.timeoutMs ?? config.jobTimeoutMs;
  return {
    leaseMs: config.leaseMs,
    maxAttempts: MAX_ATTEMPTS,
    maxFaultRetries: config.maxFaultRetries,
    timeoutMs: (type, request) => (isNodeAppJob(type) && request ? nodeAppTimeoutMs(request, timeoutOf, config.jobTimeoutMs) : timeoutOf(type)),
  };
}

/**
 * A node-app job's timeout follows from its plan: over the graph's levels, the sum of the longest
 * step timeout in each (docs/node-apps.md). A plan that cannot be read gets the default; its run
 * fails at once anyway.
 */
function nodeAppTimeoutMs(request: Readonly<Record<string, unknown>>, timeoutOf: (model: string) => number, fallback: number): number {
  try {
    return planTimeoutMs(readPlan(request).graph, timeoutOf);
  } catch {
    return fallback;
  }
}

/**
 * The prices of the catalog's models (the spec's, and custom models' from the config file) with the
 * config file's `prices` applied; a typo in a model or rate name is a config error.
 */
export function priceTableFor(config: Config, catalog: Catalog): PriceTable {
  try {
    return buildPriceTable(config.prices, catalog.entries);
  } catch (err) {
    if (err instanceof PriceError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The `input_max_*` and `input_decode_*` settings, as the engine takes them. */
export function mediaLimits(config: Config): MediaLimits {
  return {
    videoSeconds: config.inputMaxVideoSeconds,
    videoFrames: config.inputMaxVideoFrames,
    videoPixels: config.inputMaxVideoPixels,
    streams: config.inputMaxStreams,
    imagePixels: config.inputMaxImagePixels,
    decodeWallMs: config.inputDecodeTimeoutMs,
    decodeCpuSeconds: config.inputDecodeCpuSeconds,
  };
}

/**
 * The HTTP settings of a config as buildApp takes them: body limit, timeouts, connection cap and
 * the private-URL rule. Tests that listen build their app from the same function.
 */
export function httpOptionsFor(config: Config): Pick<AppDeps, 'bodyLimitBytes' | 'allowPrivateUrls' | 'inputTimeoutMs' | 'limits'> {
  return {
    bodyLimitBytes: config.bodyLimitBytes,
    allowPrivateUrls: config.allowPrivateUrls,
    inputTimeoutMs: config.inputTimeoutMs,
    limits: {
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnections: config.maxConnections,
      lingerMs: config.lingerTimeoutMs,
      lingerBytes: config.lingerMaxBytes,
    },
  };
}
