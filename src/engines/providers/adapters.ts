import type { ProviderType } from '../../config/provider-settings.js';
import { falAdapter } from './fal-adapter.js';
import { kreaAdapter } from './krea-adapter.js';
import { openaiAdapter } from './openai-adapter.js';
import type { AdapterFactory } from './provider-port.js';
import { replicateAdapter } from './replicate-adapter.js';

/** Each provider type's adapter: adding a type is adding its module here and its name to PROVIDER_TYPES. */
export const ADAPTERS: Readonly<Record<ProviderType, AdapterFactory>> = Object.freeze({
  replicate: replicateAdapter,
  fal: falAdapter,
  openai: openaiAdapter,
  krea: kreaAdapter,
});
