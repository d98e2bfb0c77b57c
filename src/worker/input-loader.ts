import { EngineError } from '../engines/engine.js';
import { DataUriError, decodeDataUri } from '../lib/data-uri.js';
import { FetchError, createGuardedDispatcher, fetchInput } from '../lib/safe-fetch.js';

export interface InputLimits {
  readonly allowPrivate: boolean;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** Reads an asset URL's file from the server's own store; undefined when the URL names no asset. */
export type AssetReader = (url: string, field: string) => Promise<Buffer | undefined>;

export interface InputLoader {
  load(url: string, field: string, signal: AbortSignal): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * Loads the inputs a request names: assets read from the store (never fetched: their URL may well
 * be a loopback address the guard refuses), `data:` URIs decoded, http(s) URLs fetched through one guarded
 * connection pool (addresses checked at connect time, redirects re-checked). A failure becomes the
 * job's error, with a message that names the field and the cause but never the URL's query or
 * credentials.
 */
export function createInputLoader(limits: InputLimits, readAsset?: AssetReader): InputLoader {
  const dispatcher = createGuardedDispatcher({ allowPrivate: limits.allowPrivate });
  return {
    async load(url, field, signal) {
      try {
        if (/^data:/i.test(url)) return decodeDataUri(url, { maxBytes: limits.maxBytes }).data;
        // Checked at upload against asset_max_bytes, so input_max_bytes does not apply.
        const asset = await readAsset?.(url, field);
        if (asset) return asset;
        const { data } = await fetchInput(url, { ...limits, signal, dispatcher });
        return data;
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (err instanceof DataUriError) throw new EngineError('input_invalid', `${field}: ${err.message}`);
        if (err instanceof FetchError) throw new EngineError('input_fetch_failed', `${field}: ${err.message}`);
        throw err;
      }
    },
    close: () => dispatcher.close(),
  };
}
