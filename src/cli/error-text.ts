import { ConfigError } from '../config/config.js';
import { DomainError } from '../domain/error-catalogue.js';

/**
 * What `mediagen` prints for a refusal: one line, the catalogue error's message (or the config
 * error's), with the wait a retryable refusal asks for. Undefined for anything else, which is a
 * bug and keeps its stack.
 */
export function cliErrorText(err: unknown): string | undefined {
  const known = err instanceof DomainError || err instanceof ConfigError || (err as { code?: string } | undefined)?.code?.startsWith('ERR_PARSE_ARGS');
  if (!known) return undefined;
  const line = (err as Error).message.trim().replace(/\s*\n\s*/g, ' ');
  const wait = err instanceof DomainError ? err.details.retryAfterSeconds : undefined;
  return wait === undefined ? line : `${line} (retry in ${wait} s)`;
}
