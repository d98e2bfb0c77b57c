/**
 * What the worker, the janitor and the services log through: pino's logger fits it, and tests
 * pass a silent or capturing one. Never give it a prompt, a token or a secret.
 */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
