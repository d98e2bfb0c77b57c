import { join } from 'node:path';
import sharp from 'sharp';
import type { OutputFile } from '../../engine.js';
import { runFfmpeg } from '../../media/ffmpeg.js';
import type { RenderEnv, Rendered } from '../render-types.js';
import { writeVideoPreview } from '../preview.js';
import { sceneSvg } from '../image/scene-svg.js';
import type { Prng } from '../seed.js';
import { AUDIO_RATE, FPS, aacArgs, audioTrim, h264Args, mp4Args } from './video-encode.js';

/**
 * A generated video: one sharp-rendered keyframe, larger than the frame, that the camera pans
 * across; an optional start image fading into it and end image fading out of it; an optional
 * seeded chord. A pan (a moving crop) costs ffmpeg almost nothing, which keeps a 1080p render to
 * a second or two on two cores; zoompan, per-frame hue or blend expressions cost several times more.
 */

export const OUTPUT_MP4: OutputFile = Object.freeze({ name: 'output.mp4', contentType: 'video/mp4' });

/** How much larger than the frame the keyframe is: the room the camera has to move. */
const OVERSCAN = 1.25;

export interface SceneVideo {
  readonly width: number;
  readonly height: number;
  readonly seconds: number;
  readonly prompt: string;
  /** Picks the keyframe and the chord. */
  readonly prng: Prng;
  /** Picks the camera path. */
  readonly camera: Prng;
  /** PNG files of exactly `width` x `height`, written while preparing. */
  readonly startImage?: string;
  readonly endImage?: string;
  readonly audio: boolean;
}

function even(n: number): number {
  return 2 * Math.round(n / 2);
}

export async function renderSceneVideo(v: SceneVideo, env: RenderEnv): Promise<Rendered> {
  const frames = v.seconds * FPS;
  const [kw, kh] = [even(v.width * OVERSCAN), even(v.height * OVERSCAN)];
  const keyframe = join(env.workDir, 'keyframe.png');
  const svg = sceneSvg(v.prng.fork('keyframe'), {
    width: kw,
    height: kh,
    prompt: v.prompt,
    hueShift: 0,
    shapes: 36,
    sizeFactor: 1,
    tiltDeg: 40,
    skewDeg: 0,
    details: 60,
  });
  // An intermediate file: fast compression, since ffmpeg reads it once.
  await sharp(Buffer.from(svg)).removeAlpha().png({ compressionLevel: 1 }).toFile(keyframe);
  env.ctx.signal.throwIfAborted();

  const inputs: string[] = ['-framerate', String(FPS), '-i', keyframe];
  const [x0, x1] = panEnds(v.camera);
  const [y0, y1] = panEnds(v.camera);
  const [mx, my] = [kw - v.width, kh - v.height];
  const along = `n/${Math.max(1, frames - 1)}`;
  const graph = [
    // Converted once, before the loop, so the per-frame work is a crop in YUV.
    `[0:v]format=yuv420p,loop=loop=-1:size=1,settb=1/${FPS},setpts=N,` +
      `crop=${v.width}:${v.height}:x='${mx}*(${x0}+(${round3(x1 - x0)})*${along})':y='${my}*(${y0}+(${round3(y1 - y0)})*${along})'[s0]`,
  ];
  let last = 's0';
  // A third of the video, so the start and end images never overlap.
  const fade = Math.max(2, Math.floor(frames / 3));
  const layer = (file: string, from: number, kind: 'in' | 'out') => {
    const index = inputs.length / 4;
    inputs.push('-framerate', String(FPS), '-i', file);
    const next = `s${index}`;
    graph.push(
      `[${index}:v]format=yuva420p,loop=loop=${fade - 1}:size=1,settb=1/${FPS},setpts=N+${from},` +
        `fade=t=${kind}:s=0:n=${fade - 1}:alpha=1[l${index}]`,
      `[${last}][l${index}]overlay=eof_action=pass:format=yuv420[${next}]`,
    );
    last = next;
  };
  if (v.startImage) layer(v.startImage, 0, 'out');
  if (v.endImage) layer(v.endImage, frames - fade, 'in');

  // Both streams end inside the graph (trim, atrim): with `-frames:v`, ffmpeg cut the audio short.
  graph.push(`[${last}]trim=end_frame=${frames}[v]`);
  if (v.audio) graph.push(`${chordSource(v.prng.fork('chord'), v.seconds)},${audioTrim(v.seconds)}[a]`);
  const out = join(env.ctx.outDir, OUTPUT_MP4.name);
  await runFfmpeg(
    [
      ...inputs,
      '-filter_complex', graph.join(';'),
      '-map', '[v]',
      ...(v.audio ? ['-map', '[a]', ...aacArgs()] : []),
      ...h264Args(),
      ...mp4Args(),
      out,
    ],
    { signal: env.ctx.signal, ffmpegPath: await env.ffmpeg() },
  );
  return { outputs: [OUTPUT_MP4], preview: await writeVideoPreview(out, frames, env) };
}

/** Two ends of a pan along one axis, at least 0.6 apart, so the camera visibly travels. */
function panEnds(prng: Prng): [number, number] {
  const from = prng.range(0, 0.2);
  const to = prng.range(0.8, 1);
  return prng.next() < 0.5 ? [round3(from), round3(to)] : [round3(to), round3(from)];
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** A major or minor triad with its octave, a slow tremolo, and soft ends so it does not click. */
function chordSource(prng: Prng, seconds: number): string {
  const root = prng.pick([110, 123.47, 130.81, 146.83, 164.81, 174.61, 196, 220]);
  const third = prng.next() < 0.5 ? 5 / 4 : 6 / 5;
  const voices = [1, third, 3 / 2, 2].map((ratio) => (root * ratio).toFixed(3));
  const tremolo = prng.range(0.2, 1.5).toFixed(3);
  const envelope = `(1-exp(-t*8))*(1-exp(-(${seconds}-t)*8))*(0.8+0.2*sin(2*PI*${tremolo}*t))`;
  const channel = (detune: number) =>
    `${envelope}*(${voices.map((f) => `0.12*sin(2*PI*${f}*${detune}*t)`).join('+')})`;
  return `aevalsrc='${channel(1)}|${channel(1.002)}':s=${AUDIO_RATE}:c=stereo:d=${seconds}`;
}
