import type { ProviderType } from '../../config/provider-settings.js';
import { falAdapter } from './fal-adapter.js';
import { kreaAdapter } from './krea-adapter.js';
import { openaiAdapter } from './openai-adapter.js';
import type { AdapterFactory } from './provider-port.js';

/** Each provider type's adapter: adding a type is adding its module here and its name to PROVIDER_TYPES. */
export const ADAPTERS: Readonly<Partial<Record<ProviderType, AdapterFactory>>> = Object.freeze({
  fal: falAdapter,
  openai: openaiAdapter,
  krea: kreaAdapter,
});
