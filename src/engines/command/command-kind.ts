import { mainOutputTypes } from '../../models/model.js';
import type { EngineKind } from '../engine-kind.js';
import type { CommandModel } from './command-engine.js';

/**
 * Model servers run as long-lived processes (docs/engines.md, "Command engine"): the config's
 * `commands`, each an engine bound as `command:<name>`. Its processes start with the first job, so
 * a server whose command models get no job loads no model; its close() stops them.
 */
export const COMMAND_KIND: EngineKind = {
  name: 'command',
  section: { key: 'commands', names: (config) => config.commands.map((c) => c.name) },
  build: async (w, opts) => {
    const { CommandEngine } = await import('./command-engine.js');
    return w.config.commands.map((settings) => {
      const engine = `command:${settings.name}`;
      const models = new Map<string, CommandModel>();
      for (const [path, b] of w.bound) {
        const entry = w.catalog.get(path);
        if (b.engine !== engine || !entry) continue;
        models.set(path, { schema: entry.request, outputTypes: mainOutputTypes(entry), ...(b.upstream?.input !== undefined ? { input: b.upstream.input } : {}) });
      }
      return new CommandEngine({ settings, models, clock: opts.clock, outputMaxBytes: w.config.workerOutputMaxBytes, ...(opts.log ? { log: opts.log } : {}) });
    });
  },
};
