import { readFileSync, statSync } from 'node:fs';
import { formatBytes } from '../lib/data-uri.js';
import { DomainError, invalid } from '../domain/error-catalogue.js';
import { NODE_APP_LIMITS, checkSchema } from '../services/node-apps/node-app-rules.js';
import { AS, WORKSPACE, iso, list, need, optional } from './admin-args.js';
import type { AdminCommand, Flags } from './admin-args.js';

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

/** Node apps (docs/node-apps.md): made and published here, listed, got and executed through the API. */
export const NODE_APP_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'node-app create',
    summary: 'create a node app in a workspace (publish a version to run it)',
    who: '(members)',
    options: [
      WORKSPACE,
      { flag: 'name', arg: 'N', help: "the app's name", required: true },
      { flag: 'slug', arg: 'S', help: 'its slug, unique in the workspace (default: from the name)' },
      { flag: 'description', arg: 'D', help: 'what it does' },
      AS,
    ],
    run: async (s, f) => {
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
  },
  {
    name: 'node-app list',
    summary: "list a workspace's node apps with their newest version, oldest app first",
    options: [WORKSPACE],
    run: async (s, f) => {
      const apps = await s.nodeApps.list(need(f, 'workspace'));
      return {
        json: apps.map((a) => ({
          node_app_id: a.id,
          name: a.name,
          slug: a.slug,
          description: a.description,
          author: a.authorId,
          last_version: a.lastVersion === 0 ? null : a.lastVersion,
          created_at: iso(a.createdAt),
          updated_at: iso(a.updatedAt),
        })),
        text: apps
          .map((a) => `${a.id}  ${a.name}  slug ${a.slug}  ${a.lastVersion === 0 ? 'no version yet' : `version ${a.lastVersion}`}  by ${a.authorId}  updated ${iso(a.updatedAt)}`)
          .join('\n'),
      };
    },
  },
  {
    name: 'node-app publish',
    summary: "publish a node app's next version",
    who: '(members)',
    options: [
      { flag: 'node-app', arg: 'A', help: 'the node app id', required: true },
      { flag: 'input-schema', arg: 'FILE', help: "a JSON Schema file for the execute body's inputs", required: true },
      { flag: 'output-schema', arg: 'FILE', help: 'a JSON Schema file for its outputs', required: true },
      { flag: 'example-output', arg: 'URL', help: 'an example output URL; repeat for more', repeatable: true },
      { flag: 'graph', arg: 'FILE', help: 'the graph of model steps it runs (docs/node-apps.md); without one it cannot be executed' },
      AS,
    ],
    run: async (s, f) => {
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
  },
];
