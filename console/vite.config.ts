import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

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
