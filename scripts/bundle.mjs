// The last step of `npm run build`: bundles the `mediagen` binary from tsc's output (dist/main.js and
// what it imports) into dist/bin/, code-split at each lazy import so a command still loads only
// what it uses, and makes dist/main.js a one-line entry into it.
//
// Why: Node 20 resolves, reads and links every ES module file on its own, and the binary's imports
// reach ~900 of them (Kysely 262, TypeBox 200, Zod 115, ...). That loading was most of a command's
// start: `mediagen admin ...` took 0.68 s and a server start 1.33 s; bundled, 0.33 s and 0.85 s
// (docs/decisions.md, "The bundled binary"). The client commands come from the client package's
// build (packages/client/dist, `npm run client:build` first) and are inlined like the rest; the
// typed client as a library (`mediagen/client`, `@mediagen/client`) stays that build, unbundled.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const OUT = join(DIST, 'bin');

// The packages compiled into the bundle (with what they import): plain JavaScript made of many
// small files. Every other package stays an import from node_modules: the native ones (better-sqlite3, sharp), and the ones
// that find files beside their own (pino's transport workers, ffmpeg-static's binary, fastify's
// plugins reading their package.json), which a bundle would move away from those files.
const INLINE = new Set([
  'kysely',
  '@sinclair/typebox',
  'zod',
  'zod-to-json-schema',
  '@modelcontextprotocol/sdk',
  'ajv',
  'ajv-formats',
  'fast-deep-equal',
  'fast-uri',
  'json-schema-traverse',
  'commander',
]);

const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

const SHIM = "#!/usr/bin/env node\n// The binary is bundled into dist/bin/ (scripts/bundle.mjs).\nimport './bin/main.js';\n";
if (readFileSync(join(DIST, 'main.js'), 'utf8') === SHIM) {
  process.stderr.write('scripts/bundle.mjs: dist/main.js is already the entry into the bundle; run tsc -p tsconfig.build.json first (npm run build does)\n');
  process.exit(1);
}

rmSync(OUT, { recursive: true, force: true });
await build({
  entryPoints: { main: join(DIST, 'main.js') },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  // The CommonJS packages inlined (Ajv, commander) call require() for Node's own modules.
  banner: { js: "import { createRequire as __mediagenRequire } from 'node:module'; const require = __mediagenRequire(import.meta.url);" },
  plugins: [
    {
      name: 'inline-only-listed-packages',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          // What an inlined package imports is inlined too, resolved from that package's own
          // directory, so a version it keeps in a nested node_modules is the one it gets.
          const fromInlined = args.importer.includes(`${sep}node_modules${sep}`);
          return INLINE.has(packageOf(args.path)) || (fromInlined && !args.path.startsWith('node:')) ? undefined : { external: true };
        });
      },
    },
  ],
});

rmSync(join(DIST, 'main.js.map'), { force: true });
writeFileSync(join(DIST, 'main.js'), SHIM);
