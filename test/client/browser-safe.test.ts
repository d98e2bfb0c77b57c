import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `mediagen/client` (@mediagen/client) runs in browsers as well as Node: nothing in packages/client/src
 * (its command line, src/cli/, aside) may import a Node
 * module (or any package: the client has no runtime dependency) or touch a Node-only global.
 * `npm run typecheck` also compiles it with DOM types and no Node types (tsconfig.client.json).
 */
const CLIENT = resolve(__dirname, '../../packages/client/src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The text without comments. */
const uncommented = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/** The text without comments and string contents, so prose and messages do not trip the scan. */
function code(text: string): string {
  return uncommented(text).replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
}

const NODE_GLOBALS = ['process', 'Buffer', 'require', '__dirname', '__filename', 'global', 'setImmediate', 'clearImmediate', 'module', 'exports'];

describe('the typed client is browser-safe', () => {
  const files = sources(CLIENT).filter((f) => !/^(generated|cli)\//.test(relative(CLIENT, f)));

  it('has its sources where the scan looks', () => {
    expect(files.map((f) => relative(CLIENT, f)).sort()).toEqual(expect.arrayContaining(['client.ts', 'index.ts', 'http.ts', 'sse.ts', 'watch.ts']));
  });

  it('imports only its own modules: no node: module, no package', () => {
    const bad: string[] = [];
    for (const file of files) {
      const text = uncommented(readFileSync(file, 'utf8'));
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g)) {
        const spec = m[2]!;
        if (!spec.startsWith('./') && !spec.startsWith('../')) bad.push(`${relative(CLIENT, file)}: ${spec}`);
        else if (!resolve(file, '..', spec).startsWith(CLIENT)) bad.push(`${relative(CLIENT, file)}: ${spec} (outside packages/client/src)`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('uses no Node-only global', () => {
    const bad: string[] = [];
    for (const file of files) {
      const text = code(readFileSync(file, 'utf8'));
      for (const name of NODE_GLOBALS) {
        // A use of the global, not a property of something else (`x.process`) or an object key.
        if (new RegExp(`(?<![.\\w$])${name}(?![\\w$])(?!\\s*:)`).test(text)) bad.push(`${relative(CLIENT, file)}: ${name}`);
      }
      if (/\bNodeJS\./.test(text)) bad.push(`${relative(CLIENT, file)}: NodeJS types`);
    }
    expect(bad).toEqual([]);
  });

  it('the scan catches what it is for', () => {
    const sample = code("import { readFile } from 'node:fs';\nconst b = Buffer.from('x'); // process\nif (process.env.X) {}");
    expect(/(?<![.\w$])Buffer(?![\w$])/.test(sample)).toBe(true);
    expect(/(?<![.\w$])process(?![\w$])/.test(sample)).toBe(true);
    expect(code("const s = 'process and Buffer'; /* require */")).not.toMatch(/process|Buffer|require/);
  });
});
