import { ConfigError, shownUrl } from './readers.js';
import type { OptionSpec } from './options.js';

/** A setting's value, as the config file, the environment or a flag gave it. */
export type Value = string | number | boolean;

/** A raw setting as its spec's type, or a ConfigError naming `where`. */
export function coerce(spec: OptionSpec, raw: unknown, where: string): Value {
  switch (spec.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string' && /^(1|true|yes|on)$/i.test(raw)) return true;
      if (typeof raw === 'string' && /^(0|false|no|off)$/i.test(raw)) return false;
      throw new ConfigError(`${where} must be true or false, got ${JSON.stringify(raw)}`);
    case 'integer': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n) || (spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        throw new ConfigError(`${where} must be an integer from ${spec.min} to ${spec.max}, got ${JSON.stringify(raw)}`);
      }
      return n;
    }
    case 'url': {
      if (typeof raw === 'string') {
        try {
          const u = new URL(raw);
          if (u.protocol === 'http:' || u.protocol === 'https:') return raw.replace(/\/+$/, '');
        } catch {
          /* reported below */
        }
      }
      throw new ConfigError(`${where} must be an absolute http(s) URL, got ${shownUrl(raw)}`);
    }
    case 'string':
      if (typeof raw === 'string' && raw.length > 0) {
        if (spec.oneOf && !spec.oneOf.includes(raw)) throw new ConfigError(`${where} must be one of ${spec.oneOf.join(', ')}`);
        if (spec.pattern && !spec.pattern.re.test(raw)) throw new ConfigError(`${where} must be ${spec.pattern.says}`);
        return raw;
      }
      throw new ConfigError(`${where} must be a non-empty string`);
  }
}
