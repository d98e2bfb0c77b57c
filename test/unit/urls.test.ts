import { describe, expect, it } from 'vitest';
import { resolveUrl } from '../../src/lib/urls.js';
import { buildCatalog } from '../../src/models/catalog.js';
import { deprecationHeaders } from '../../src/http/request/deprecation-headers.js';
import { sunsetError } from '../../src/models/deprecation.js';

describe('links against the public URL', () => {
  it('keep a path prefix of the public URL', () => {
    expect(resolveUrl('deprecations#x', 'https://gen.example.com/api')).toBe('https://gen.example.com/api/deprecations#x');
    expect(resolveUrl('deprecations#x', 'https://gen.example.com/api/')).toBe('https://gen.example.com/api/deprecations#x');
    expect(resolveUrl('https://docs.example.com/m', 'https://gen.example.com/api')).toBe('https://docs.example.com/m');
  });

  it('the default deprecation link and 410 migration_url sit under the public URL', () => {
    const model = buildCatalog({}).get('image/vendor-g/model-g-3')!;
    const base = 'https://gen.example.com/api';
    expect(deprecationHeaders(model.deprecation!, base).link).toBe(
      '<https://gen.example.com/api/deprecations#image/vendor-g/model-g-3>; rel="deprecation"',
    );
    expect(sunsetError(model.path, model.deprecation!, base).details.fields?.migration_url).toBe(
      'https://gen.example.com/api/deprecations#image/vendor-g/model-g-3',
    );
  });
});
