/**
 * The three ESRGAN generators UpscalerJS ships (slim, medium, thick) against lanczos3, at x2 and
 * x4: PSNR gained on photographs and on drawings, and the cost per output megapixel. Not part of
 * `npm run bench`:
 *
 *   npm run bench:upscale-quality                  # every size at x2 and x4
 *   BENCH_SIZES=slim,medium BENCH_SCALES=4 npm run bench:upscale-quality
 *   BENCH_PAD=16 ...                               # tile context in input pixels (default TILE_PAD)
 *
 * Each reference (test/engines/upscale-references.ts: three 256 x 256 photographs, three 384 x 384
 * drawings) is shrunk `scale` times with lanczos3 and enlarged back through the renderer's tiled
 * path (image/neural-upscale.ts), and by lanczos3 alone. The gain is the network's PSNR minus
 * lanczos3's, in dB. The cost is CPU seconds of this process (user + system) per output
 * megapixel: the network runs on one wasm thread, so on an idle machine that is its wall time,
 * and on a shared one it is still what the render costs. Wall seconds are printed beside it.
 * docs/benchmarks.md records a run; docs/decisions.md says which generator each scale runs.
 */
import { cpus, loadavg } from 'node:os';
import { esrgan, ESRGAN_SIZES } from '../src/engines/local/image/esrgan.js';
import type { EsrganScale, EsrganSize } from '../src/engines/local/image/esrgan.js';
import { TILE_PAD, upscaleTiled } from '../src/engines/local/image/neural-upscale.js';
import type { RawImage } from '../src/engines/local/image/pixels.js';
import { DRAWINGS, PHOTOS, lanczos, photo, psnr, raw, shrunk } from '../test/engines/upscale-references.js';

const list = (v: string | undefined, all: readonly string[]) => (v ? v.split(',').filter((x) => all.includes(x)) : all);
const SIZES = list(process.env.BENCH_SIZES, ESRGAN_SIZES) as EsrganSize[];
const SCALES = list(process.env.BENCH_SCALES, ['2', '4']).map(Number) as EsrganScale[];
const PAD = Number(process.env.BENCH_PAD ?? TILE_PAD);
const never = new AbortController().signal;

const references: { name: string; kind: 'photo' | 'drawing'; img: RawImage }[] = [
  ...(await Promise.all(PHOTOS.map(async (name) => ({ name, kind: 'photo' as const, img: await raw(await photo(name)) })))),
  ...(await Promise.all(Object.entries(DRAWINGS).map(async ([name, draw]) => ({ name, kind: 'drawing' as const, img: await raw(draw()) })))),
];

const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f2 = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(2);

console.log(`${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}, Node ${process.version}, tile context ${PAD} px\n`);
console.log('| scale | network | photographs: gain over lanczos3, mean (least) | drawings: gain, mean (least) | CPU s per output MP | wall s per output MP |');
console.log('| --- | --- | --- | --- | --- | --- |');
const detail: string[] = [];
for (const scale of SCALES) {
  for (const size of SIZES) {
    const model = await esrgan(scale, size);
    await model.upscale(new Uint8Array(16 * 16 * 3), 16, 16);
    const gains: Record<'photo' | 'drawing', number[]> = { photo: [], drawing: [] };
    let [cpu, wall, mp] = [0, 0, 0];
    for (const ref of references) {
      const small = await shrunk(ref.img, scale);
      const [c0, t0] = [cpuSeconds(), performance.now()];
      const net = await upscaleTiled(small, scale, (p, w, h) => model.upscale(p, w, h), never, undefined, PAD);
      [cpu, wall, mp] = [cpu + cpuSeconds() - c0, wall + (performance.now() - t0) / 1000, mp + (net.width * net.height) / 1e6];
      // The network's output is `scale` times the shrunk size: compare at that size when rounding cut a pixel.
      const target = net.width === ref.img.width && net.height === ref.img.height ? ref.img : await lanczos(ref.img, net.width, net.height);
      const [n, l] = [psnr(target, net), psnr(target, await lanczos(small, net.width, net.height))];
      gains[ref.kind].push(n - l);
      detail.push(`x${scale} ${size} ${ref.kind} ${ref.name}: network ${n.toFixed(2)} dB, lanczos3 ${l.toFixed(2)} dB (${f2(n - l)})`);
    }
    const cell = (g: number[]) => `${f2(mean(g))} (${f2(Math.min(...g))})`;
    console.log(`| x${scale} | ${size} | ${cell(gains.photo)} | ${cell(gains.drawing)} | ${(cpu / mp).toFixed(1)} | ${(wall / mp).toFixed(1)} |`);
  }
}
console.log('\n' + detail.join('\n'));
