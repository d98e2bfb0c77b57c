/**
 * When the sandbox (`--sandbox`, docs/sandbox.md) is refused: a server with production settings.
 * Those are, and only those: NODE_ENV=production, a PostgreSQL `database_url` (a shared, scaled-out
 * deployment), or a model bound to a remote pool (`remote:<pool>`, in `model_engines` or a model's
 * own binding). The config loader checks the first two and `model_engines`; the runtime checks the
 * bindings once they are built.
 */
export interface ProductionSettings {
  readonly nodeEnv?: string | undefined;
  readonly databaseUrl?: string | undefined;
  /** Models bound to a remote pool: [model path, binding]. */
  readonly remoteModels?: readonly (readonly [string, string])[];
}

/** The one-line refusal of `--sandbox` under these settings, or undefined when the sandbox may run. */
export function sandboxRefusal(s: ProductionSettings): string | undefined {
  const why =
    s.nodeEnv === 'production'
      ? 'NODE_ENV is production'
      : s.databaseUrl
        ? 'a PostgreSQL database_url is set (a shared, scaled-out deployment)'
        : s.remoteModels?.[0]
          ? `model ${s.remoteModels[0][0]} is bound to a remote pool (${s.remoteModels[0][1]})`
          : undefined;
  return why && `--sandbox (MEDIAGEN_SANDBOX) is refused with production settings: ${why}; the sandbox makes jobs fail on purpose and is for development and integration servers only (docs/sandbox.md)`;
}
