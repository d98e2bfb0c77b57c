import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';

/**
 * model-viewer puts a fixed <style> element in each shadow root, which a CSP without
 * 'unsafe-inline' refuses unless its hash is listed. Its hash is taken from the source at build
 * time into csp.json, which the server adds to style-src (src/http/routes/console-routes.ts): an upgrade
 * of model-viewer that changes the style changes the hash with it.
 */
function shadowStyleHashes(): Plugin {
  const hashes = new Set<string>();
  return {
    name: 'mediagen-shadow-style-hashes',
    transform(code, id) {
      if (!id.includes('/@google/model-viewer/')) return null;
      for (const [, css = ''] of code.matchAll(/<style>([\s\S]*?)<\/style>/g)) {
        // A template part with an interpolation or an escape is not the text the browser hashes.
        if (css.includes('${') || css.includes('\\')) this.error(`${id}: a <style> whose text is computed cannot be hashed for the console's CSP`);
        hashes.add(`'sha256-${createHash('sha256').update(css).digest('base64')}'`);
      }
      return null;
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: 'csp.json', source: JSON.stringify({ 'style-src': [...hashes].sort() }) });
    },
  };
}

/**
 * The web console (docs/console.md): built by `npm run build` into dist/console, which every API
 * process serves at /console. Preact's JSX through Vite's own transformer (oxc), so no Babel.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: 'public',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [shadowStyleHashes()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill would be an inline script, which the console's Content-Security-Policy refuses.
    modulePreload: { polyfill: false },
    // model-viewer (with three.js) is one lazy chunk of about a megabyte, loaded only to show 3D.
    chunkSizeWarningLimit: 1200,
    reportCompressedSize: false,
  },
});
