/**
 * The enhancers' neural upscaler (ESRGAN slim on TensorFlow.js wasm), seconds per output megapixel
 * for each scale it has weights for, beside sharp's lanczos3 (not part of `npm run bench`):
 *
 *   npm run bench:upscale          # BENCH_RUNS (default 2) timed runs per scale after one warm-up
 *
 * Each scale enlarges a drawn picture (shapes, text, a texture) of 1024 / scale pixels a side to
 * about one megapixel through the same tiled path as standard-enhance (image/neural-upscale.ts),
 * on the process's one wasm thread. Prints the median and the slowest run. docs/benchmarks.md
 * records a run; the renderer's plan (NETWORKS in image/neural-upscale.ts) is rounded up from these
 * figures. It times slim only; bench/upscale-quality.bench.ts compares slim, medium and thick.
 */
import { cpus, loadavg } from 'node:os';
import sharp from 'sharp';
import { esrgan } from '../src/engines/local/image/esrgan.js';
import type { EsrganScale } from '../src/engines/local/image/esrgan.js';
import { upscaleTiled } from '../src/engines/local/image/neural-upscale.js';
import type { RawImage } from '../src/engines/local/image/pixels.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 2));
const OUT_SIDE = 1024;

async function picture(side: number): Promise<RawImage> {
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${side}" height="${side}" viewBox="0 0 96 96">` +
    '<rect width="96" height="96" fill="#f2efe6"/><circle cx="64" cy="60" r="22" fill="#e63946"/>' +
    '<polygon points="8,90 40,52 52,88" fill="#2a9d8f"/><text x="4" y="30" font-family="sans-serif" font-size="20">Abc 42</text>' +
    '<line x1="0" y1="0" x2="96" y2="70" stroke="#111" stroke-width="2"/></svg>';
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const never = new AbortController().signal;

console.log(`${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}, Node ${process.version}, ${RUNS} runs per scale\n`);
const loadStart = performance.now();
await esrgan(4);
console.log(`wasm backend and x4 weights loaded in ${((performance.now() - loadStart) / 1000).toFixed(2)} s\n`);
console.log('| scale | input | output MP | ESRGAN s per output MP, median (slowest) | lanczos3 s per output MP |');
console.log('| --- | --- | --- | --- | --- |');
for (const scale of [2, 3, 4, 8] as EsrganScale[]) {
  const side = Math.round(OUT_SIDE / scale);
  const img = await picture(side);
  const model = await esrgan(scale);
  const run = () => upscaleTiled(img, scale, (p, w, h) => model.upscale(p, w, h), never);
  await upscaleTiled(await picture(32), scale, (p, w, h) => model.upscale(p, w, h), never);
  const mp = (side * scale) ** 2 / 1e6;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push((await timed(run)) / mp);
  const lanczos = (await timed(() => sharp(img.data, { raw: { width: side, height: side, channels: 3 } }).resize(side * scale, side * scale, { kernel: 'lanczos3' }).raw().toBuffer())) / mp;
  console.log(`| x${scale} | ${side} x ${side} | ${mp.toFixed(2)} | ${median(times).toFixed(2)} (${Math.max(...times).toFixed(2)}) | ${lanczos.toFixed(3)} |`);
}
