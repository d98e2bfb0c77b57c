import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { locateFfmpeg, runFfmpeg } from '../../src/engines/media/ffmpeg.js';

/** Hostile media made from real files: real MP4s patched to lie, real PNG chunks that claim too much. */

/** A short, tiny H.264 MP4 made by ffmpeg (about 1.5 KB at the defaults). */
export async function tinyMp4(dir: string, opts: { seconds?: number; size?: string; name?: string } = {}): Promise<Buffer> {
  const out = join(dir, opts.name ?? 'tiny.mp4');
  await runFfmpeg(
    [
      '-f', 'lavfi', '-i', `color=c=red:s=${opts.size ?? '32x32'}:r=24:d=${opts.seconds ?? 1}`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', out,
    ],
    { signal: new AbortController().signal, ffmpegPath: await locateFfmpeg() },
  );
  return readFile(out);
}

interface Box {
  readonly type: string;
  readonly start: number;
  readonly end: number;
}

function boxesIn(buf: Buffer, from: number, to: number): Box[] {
  const out: Box[] = [];
  let at = from;
  while (at + 8 <= to) {
    let size = buf.readUInt32BE(at);
    if (size === 1) size = Number(buf.readBigUInt64BE(at + 8));
    if (size === 0) size = to - at;
    if (size < 8 || at + size > to) throw new Error(`bad box at ${at}`);
    out.push({ type: buf.toString('latin1', at + 4, at + 8), start: at, end: at + size });
    at += size;
  }
  return out;
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'edts']);

/**
 * Makes a real MP4 claim to last `seconds` everywhere a demuxer looks: the movie header (mvhd),
 * each track header (tkhd) and edit list (elst), each track's media header (mdhd), and the sample
 * durations (stts), stretched so the same few frames span the whole claim. The file keeps its size.
 */
export function claimDuration(mp4: Buffer, seconds: number): Buffer {
  const buf = Buffer.from(mp4);
  const patched = new Set<string>();
  let movieScale = 0;
  let mediaScale = 0;
  const u32 = (at: number, value: number) => buf.writeUInt32BE(Math.round(value), at);
  const walk = (from: number, to: number) => {
    for (const box of boxesIn(buf, from, to)) {
      const body = box.start + 8;
      // Every box patched here is written as version 0 by ffmpeg's muxer; refuse anything else.
      if (['mvhd', 'tkhd', 'mdhd', 'elst', 'stts'].includes(box.type) && buf[body] !== 0) throw new Error(`${box.type} is not version 0`);
      switch (box.type) {
        case 'mvhd': // version+flags, creation, modification, timescale, duration
          movieScale = buf.readUInt32BE(body + 12);
          u32(body + 16, seconds * movieScale);
          break;
        case 'tkhd': // version+flags, creation, modification, track id, reserved, duration
          u32(body + 20, seconds * movieScale);
          break;
        case 'elst': // version+flags, entry count, then segment duration, media time, rate
          for (let i = 0; i < buf.readUInt32BE(body + 4); i++) u32(body + 8 + i * 12, seconds * movieScale);
          break;
        case 'mdhd': // as mvhd
          mediaScale = buf.readUInt32BE(body + 12);
          u32(body + 16, seconds * mediaScale);
          break;
        case 'stts': {
          // version+flags, entry count, then (sample count, sample delta) pairs
          const entries = buf.readUInt32BE(body + 4);
          let samples = 0;
          for (let i = 0; i < entries; i++) samples += buf.readUInt32BE(body + 8 + i * 8);
          for (let i = 0; i < entries; i++) u32(body + 12 + i * 8, (seconds * mediaScale) / samples);
          break;
        }
      }
      patched.add(box.type);
      if (CONTAINERS.has(box.type)) walk(body, box.end);
    }
  };
  walk(0, buf.length);
  for (const type of ['mvhd', 'mdhd', 'stts']) if (!patched.has(type)) throw new Error(`claimDuration: no ${type}`);
  return buf;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A valid PNG header claiming `width` x `height` RGB pixels, followed by a few compressed rows of
 * zeros: a decompression bomb's opening, a hundred bytes that would decode to gigabytes.
 */
export function pngClaiming(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(3 * width + 1))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A loopback HTTP server that serves fixed bodies by path and records every path asked for. */
export interface Canary {
  readonly origin: string;
  readonly requests: string[];
  serve(path: string, type: string, body: Buffer | string): void;
  close(): Promise<void>;
}

export async function canaryServer(): Promise<Canary> {
  const requests: string[] = [];
  const bodies = new Map<string, { type: string; body: Buffer | string }>();
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const found = bodies.get(req.url ?? '');
    if (!found) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': found.type }).end(found.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    serve: (path, type, body) => void bodies.set(path, { type, body }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
