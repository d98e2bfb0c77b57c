import type { ModelModule } from './model.js';

/**
 * Retired models of spec section 9: they exist only to answer 410, so they have no request
 * schema, price or engine.
 */
const retired = (path: string, summary: string, kind: ModelModule['kind'], sunsetDate: string, replacement?: string): ModelModule => ({
  path,
  summary,
  kind,
  aliases: [],
  zeroDataRetention: false,
  deprecation: { sunsetDate, ...(replacement ? { replacement } : {}) },
});

export const RETIRED: readonly ModelModule[] = [
  retired('image/vendor-g/model-g-3', 'Retired: use image/vendor-g/model-g-5-lite', 'image', '2026-05-13', 'image/vendor-g/model-g-5-lite'),
  retired('video/vendor-g/model-h-1.0-lite', 'Retired: use video/vendor-g/model-h-1.0-pro-fast', 'video', '2026-04-27', 'video/vendor-g/model-h-1.0-pro-fast'),
  retired('video/vendor-i/model-i-2', 'Retired, with no replacement', 'video', '2026-04-27'),
];
