import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * npm runs a dependency's install script only if package.json's `allowScripts` allows it, and
 * warns on every `npm ci` about each one it does not cover (issue 42: core-js's). Every package of
 * the lockfile with an install script that npm installs here must be settled, true or false.
 */

const ROOT = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('package.json', ROOT)), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(fileURLToPath(new URL('package-lock.json', ROOT)), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean; optional?: boolean; os?: string[]; cpu?: string[] }>;
};

/** Whether npm installs an optional platform package on this machine (its `os` and `cpu` match). */
const installedHere = (p: { os?: string[]; cpu?: string[] }) => (p.os?.includes(process.platform) ?? true) && (p.cpu?.includes(process.arch) ?? true);

describe('allowScripts', () => {
  it('settles every install script npm would run here, each true or false', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript && (!p.optional || installedHere(p)))
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('core-js');
    const allowed = pkg.allowScripts ?? {};
    expect(withScripts.filter((name) => typeof allowed[name] !== 'boolean')).toEqual([]);
  });

  it("denies core-js's, which only prints a funding banner", () => {
    const coreJs = JSON.parse(readFileSync(fileURLToPath(new URL('node_modules/core-js/package.json', ROOT)), 'utf8')) as { scripts?: Record<string, string> };
    expect(coreJs.scripts?.postinstall).toMatch(/require\('\.\/postinstall'\)/);
    expect(pkg.allowScripts?.['core-js']).toBe(false);
  });
});
