import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeVersion, isCurrent, parseToolVersion } from '../../src/engines/media/ffmpeg-version.js';
import { binaryLocator } from '../../src/engines/media/locate-binary.js';
import type { BinarySource } from '../../src/engines/media/locate-binary.js';
import { mediaToolsLine, mediaToolsWarnings } from '../../src/engines/media/media-tools.js';

/** `-version` banners as the builds print them (first line, and the libavcodec line). */
const BUNDLED_41 =
  'ffmpeg version N-47683-g0e8eb07980-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2000-2018 the FFmpeg developers\n' +
  'built with gcc 6.3.0 (Debian 6.3.0-18+deb9u1) 20170516\nlibavutil      56. 24.101 / 56. 24.101\nlibavcodec     58. 42.100 / 58. 42.100\n';
const BUNDLED_PROBE =
  'ffprobe version N-66595-gc2b38619c0-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2007-2023 the FFmpeg developers\n' +
  'libavutil      58. 36.101 / 58. 36.101\nlibavcodec     60. 22.100 / 60. 22.100\n';
const DEBIAN_51 = 'ffmpeg version 5.1.6-0+deb12u1 Copyright (c) 2000-2024 the FFmpeg developers\nlibavcodec     59. 37.100 / 59. 37.100\n';

const dir = mkdtempSync(join(tmpdir(), 'mediagen-fake-ffmpeg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fake binary: a shell script printing `banner` for -version and the encoders for -encoders. */
function fake(name: string, banner: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\ncase "$*" in *-encoders*) echo ' V..... libx264 aac libmp3lame';; *) printf '%s' '${banner.replace(/'/g, "'\\''")}';; esac\n`);
  chmodSync(path, 0o755);
  return path;
}

const source = (onPath: string, bundled: string): BinarySource => ({
  name: onPath,
  probeArgs: ['-hide_banner', '-encoders'],
  accepts: (out) => /libx264/.test(out),
  bundled: () => bundled,
});

describe('FFmpeg versions', () => {
  it('reads a release banner, and a snapshot build by its libavcodec', () => {
    expect(parseToolVersion(DEBIAN_51)).toEqual({ banner: '5.1.6-0+deb12u1', release: [5, 1] });
    expect(parseToolVersion(BUNDLED_41)).toEqual({ banner: 'N-47683-g0e8eb07980-static', release: [4, 1] });
    expect(parseToolVersion(BUNDLED_PROBE)).toEqual({ banner: 'N-66595-gc2b38619c0-static', release: [6, 0] });
    expect(parseToolVersion('ffmpeg version n7.1 Copyright\n')?.release).toEqual([7, 1]);
    expect(parseToolVersion('not ffmpeg at all')).toBeUndefined();
    expect(parseToolVersion('ffmpeg version N-1-gabc\n')).toEqual({ banner: 'N-1-gabc', release: undefined });
  });

  it('calls 5.1 and later current, and anything older or unknown not', () => {
    expect(isCurrent(parseToolVersion(DEBIAN_51))).toBe(true);
    expect(isCurrent(parseToolVersion(BUNDLED_PROBE))).toBe(true);
    expect(isCurrent(parseToolVersion('ffmpeg version 5.0.3\n'))).toBe(false);
    expect(isCurrent(parseToolVersion(BUNDLED_41))).toBe(false);
    expect(isCurrent(undefined)).toBe(false);
    expect(describeVersion(parseToolVersion(BUNDLED_41))).toBe('N-47683-g0e8eb07980-static (FFmpeg 4.1)');
    expect(describeVersion(parseToolVersion(DEBIAN_51))).toBe('5.1.6-0+deb12u1');
  });
});

describe('choosing the ffmpeg to run', () => {
  const current = fake('ffmpeg-5.1', DEBIAN_51);
  const old = fake('ffmpeg-4.1', BUNDLED_41);

  it('takes the configured path first, then the one on PATH, then the bundled one, each with its version', async () => {
    const locate = binaryLocator(source(current, old));
    expect(await locate.describe()).toEqual({ path: current, source: 'PATH', version: { banner: '5.1.6-0+deb12u1', release: [5, 1] } });
    expect(await locate()).toBe(current);
    locate.configure(old);
    expect(await locate.describe()).toMatchObject({ path: old, source: 'config', version: { release: [4, 1] } });
    expect(await locate('/explicit/ffmpeg')).toBe('/explicit/ffmpeg');

    const noPath = binaryLocator(source(join(dir, 'nowhere'), old));
    expect(await noPath.describe()).toMatchObject({ path: old, source: 'bundled', version: { release: [4, 1] } });
  });

  it('refuses a configured path that cannot be run, naming the setting', async () => {
    const locate = binaryLocator({ ...source(current, old), name: 'ffmpeg' });
    locate.configure(join(dir, 'missing-ffmpeg'));
    await expect(locate.describe()).rejects.toThrow(/cannot run ffmpeg at .*missing-ffmpeg \(ffmpeg_path\)/);
  });

  it('warns, naming the version, when the ffmpeg in use is older than 5.1, and not when it is current', async () => {
    const probe = await binaryLocator(source(fake('ffprobe-6', BUNDLED_PROBE), old)).describe();
    const bundled = await binaryLocator(source(join(dir, 'nowhere'), old)).describe();
    const tools = { ffmpeg: bundled, ffprobe: probe };
    expect(mediaToolsLine(tools)).toBe('ffmpeg N-47683-g0e8eb07980-static (FFmpeg 4.1) (bundled), ffprobe N-66595-gc2b38619c0-static (FFmpeg 6.0) (PATH)');
    const [warning, ...more] = mediaToolsWarnings(tools);
    expect(more).toEqual([]);
    expect(warning).toMatch(/^ffmpeg N-47683-g0e8eb07980-static \(FFmpeg 4\.1\) \(bundled\) is older than FFmpeg 5\.1: .*apt-get install ffmpeg.*ffmpeg_path/);
    const onPath = await binaryLocator(source(current, old)).describe();
    expect(mediaToolsWarnings({ ffmpeg: onPath, ffprobe: probe })).toEqual([]);
  });
});
