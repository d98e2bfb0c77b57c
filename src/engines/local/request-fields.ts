import { isPlainObject } from '../../lib/plain-object.js';

/**
 * Typed reads of a validated request. Validation has already applied defaults and refused bad
 * values; these fall back anyway, so a request stored by an older schema still renders.
 */
export type Request = Readonly<Record<string, unknown>>;

export function str(req: Request, key: string, fallback: string): string {
  const v = req[key];
  return typeof v === 'string' ? v : fallback;
}

export function optStr(req: Request, key: string): string | undefined {
  const v = req[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function num(req: Request, key: string, fallback: number): number {
  const v = req[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

export function bool(req: Request, key: string, fallback: boolean): boolean {
  const v = req[key];
  return typeof v === 'boolean' ? v : fallback;
}

/** The object items of an array field; anything else in it is skipped. */
export function objects(req: Request, key: string): Request[] {
  const v = req[key];
  if (!Array.isArray(v)) return [];
  return v.filter(isPlainObject);
}

/** The string items of an array field; anything else in it is skipped. */
export function strings(req: Request, key: string): string[] {
  const v = req[key];
  if (!Array.isArray(v)) return [];
  return v.filter((item): item is string => typeof item === 'string');
}
