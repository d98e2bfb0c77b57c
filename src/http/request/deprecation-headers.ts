import { formatHttpDate } from '../../lib/time.js';
import { resolveUrl } from '../../lib/urls.js';
import type { Deprecation } from '../../models/deprecation.js';

/** The headers of spec section 9 for every successful response of a deprecated model. */
export function deprecationHeaders(dep: Deprecation, publicUrl: string): Record<string, string> {
  return {
    deprecation: 'true',
    sunset: formatHttpDate(dep.sunsetMs),
    link: `<${resolveUrl(dep.migrationUrl, publicUrl)}>; rel="deprecation"`,
  };
}
