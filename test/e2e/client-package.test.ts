import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/**
 * `mediagen/client` as a consumer meets it: through package.json `exports` (the package refers to
 * itself by name, as an installed copy would be referred to), from the built dist/ with its
 * declarations (`npm run build`).
 */
describe('the package entry mediagen/client', { timeout: 90_000 }, () => {
  const dir = join(ROOT, '.tmp', `client-consumer-${process.pid}`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports in Node by its package name', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('mediagen/client'); console.log(Object.keys(m).sort().join(' '))"], { cwd: ROOT });
    expect(stdout.trim().split(' ')).toEqual(expect.arrayContaining(['Mediagen', 'MediagenError', 'MediagenNetworkError', 'isTerminal', 'outputUrls']));
  });

  it('type-checks a browser consumer (DOM types, no Node types) against its declarations', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'consumer.ts'),
      [
        "import { Mediagen, MediagenError } from 'mediagen/client';",
        "import type { Job } from 'mediagen/client';",
        "const mg = new Mediagen({ baseUrl: 'https://media.example.com', token: 't' });",
        "export async function run(file: File): Promise<Job> {",
        "  await mg.assets.upload(file, { description: 'x' });",
        "  // @ts-expect-error resolution is required",
        "  await mg.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1' });",
        "  try {",
        "    return await mg.generate('image/vendor-a/model-a-2/medium', { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }, { wait: 30 });",
        "  } catch (err) {",
        "    if (err instanceof MediagenError && err.status === 410) console.log(err.replacement);",
        "    throw err;",
        "  }",
        "}",
        '',
      ].join('\n'),
    );
    const compilerOptions = { noEmit: true, strict: true, module: 'node16', moduleResolution: 'node16', target: 'ES2022', lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: [] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: ROOT }).catch((err: { stdout?: string; code?: number }) => err);
    expect((result as { stdout?: string }).stdout ?? '').toBe('');
  });
});
