/**
 * What the worker, the janitor and the services log through: pino's logger fits it, and tests
 * pass a silent or capturing one. Never give it a prompt, a token or a secret.
 */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** `log` with `fields` added to every line (a job's request id on each line about the job). */
export function withFields(log: Log, fields: Readonly<Record<string, unknown>>): Log {
  return {
    info: (obj, msg) => log.info({ ...fields, ...obj }, msg),
    warn: (obj, msg) => log.warn({ ...fields, ...obj }, msg),
    error: (obj, msg) => log.error({ ...fields, ...obj }, msg),
  };
}
