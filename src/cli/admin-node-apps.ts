import { readFileSync, statSync } from 'node:fs';
import { formatBytes } from '../lib/data-uri.js';
import { DomainError, invalid } from '../domain/errors.js';
import { NODE_APP_LIMITS, checkSchema } from '../services/node-app-rules.js';
import { iso, need, optional } from './admin-args.js';
import type { Command, Flags } from './admin-args.js';

export const NODE_APP_HELP = `  node-app create --workspace W --name N [--slug S] [--description D]
                  --as EMAIL                                              (members)
  node-app publish --node-app A --input-schema FILE --output-schema FILE
                   [--example-output URL]... [--graph FILE] --as EMAIL    (members)
`;

/** A JSON file of at most `maxBytes`, parsed; every refusal names the flag and the file. */
function readJson(flag: string, file: string, maxBytes: number): unknown {
  let text: string;
  try {
    if (statSync(file).size > maxBytes) throw invalid(`--${flag} ${file} is larger than ${formatBytes(maxBytes)}`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw invalid(`--${flag} ${file} cannot be read: ${code === 'ENOENT' ? 'no such file' : ((err as Error).message ?? String(err))}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`--${flag} ${file} is not JSON: ${(err as Error).message}`);
  }
}

/** A schema file, checked here so that every refusal names the file. */
function readSchema(f: Flags, flag: string): unknown {
  const file = need(f, flag);
  return checkSchema(readJson(flag, file, NODE_APP_LIMITS.schemaMaxBytes), `--${flag} ${file}`);
}

/** The graph file, if given; the service checks it (its refusals name the place in the graph). */
function readGraph(f: Flags): unknown {
  const file = optional(f, 'graph');
  return file === undefined ? undefined : readJson('graph', file, NODE_APP_LIMITS.graphMaxBytes);
}

function list(f: Flags, name: string): string[] {
  const v = f[name];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw invalid(`--${name} takes a value`);
  return v;
}

export const NODE_APP_COMMANDS: Record<string, Command> = {
  'node-app create': async (s, f) => {
    const app = await s.nodeApps.create({
      workspace: need(f, 'workspace'),
      name: need(f, 'name'),
      slug: optional(f, 'slug'),
      description: optional(f, 'description'),
      asEmail: need(f, 'as'),
    });
    return {
      json: { node_app_id: app.id },
      text: `created node app ${app.name} (${app.id}), slug ${app.slug}`,
    };
  },
  'node-app publish': async (s, f) => {
    const { app, version } = await s.nodeApps.publish({
      nodeAppId: need(f, 'node-app'),
      inputSchema: readSchema(f, 'input-schema'),
      outputSchema: readSchema(f, 'output-schema'),
      exampleOutputs: list(f, 'example-output'),
      graph: readGraph(f),
      asEmail: need(f, 'as'),
    });
    return {
      json: { node_app_version_id: version.id, version: version.version },
      text: `published ${app.name} version ${version.version} (${version.id}) at ${iso(version.createdAt)}`,
    };
  },
};
