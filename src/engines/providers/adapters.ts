import type { ProviderType } from '../../config/provider-types.js';
import { falAdapter } from './fal-adapter.js';
import { kreaAdapter } from './krea-adapter.js';
import { openaiAdapter } from './openai-adapter.js';
import type { AdapterFactory } from './provider-port.js';
import { replicateAdapter } from './replicate-adapter.js';

/**
 * Each provider type's adapter, by the name its entry in config/provider-types.ts (the type's facts:
 * auth, base URL, keys, binding rule, deduplication) declares. The mapped type makes a type without
 * an adapter a compile error, so the list there and this one cannot drift apart.
 */
export const ADAPTERS: { readonly [T in ProviderType]: AdapterFactory } = Object.freeze({
  replicate: replicateAdapter,
  fal: falAdapter,
  openai: openaiAdapter,
  krea: kreaAdapter,
});
