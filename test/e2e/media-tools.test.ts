import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, oneLineError, run, startServer, tempDir } from './binary.js';

/**
 * The FFmpeg `mediagen serve` runs (issue 32): named on a start line and in /readyz, with a
 * warning naming the version when it is older than 5.1. Fake binaries (shell scripts printing a
 * version banner) stand in for the builds, so this does not depend on what is installed.
 */
afterEach(cleanup);

function fake(dir: string, name: string, banner: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\nprintf '%s\\n' '${banner}'\n`);
  chmodSync(path, 0o755);
  return path;
}

const OLD = 'ffmpeg version N-47683-g0e8eb07980-static https://johnvansickle.com/ffmpeg/\nlibavcodec     58. 42.100 / 58. 42.100';
const CURRENT = 'ffmpeg version 5.1.6-0+deb12u1 Copyright (c) 2000-2024 the FFmpeg developers\nlibavcodec     59. 37.100 / 59. 37.100';
const PROBE = 'ffprobe version 5.1.6-0+deb12u1 Copyright (c) 2007-2024 the FFmpeg developers';

describe('mediagen serve: the FFmpeg in use', () => {
  it('names the configured ffmpeg and ffprobe on a start line and in /readyz, and warns naming an ffmpeg older than 5.1', async () => {
    const bin = tempDir();
    const server = await startServer(
      ['--port', '0', '--data-dir', tempDir(), '--ffmpeg-path', fake(bin, 'ffmpeg', OLD), '--ffprobe-path', fake(bin, 'ffprobe', PROBE)],
    );
    const [line] = await server.waitForStdout(/^mediagen: ffmpeg .*\n/m);
    expect(line).toBe('mediagen: ffmpeg N-47683-g0e8eb07980-static (FFmpeg 4.1) (config), ffprobe 5.1.6-0+deb12u1 (config)\n');
    const [warning] = await server.waitForStdout(/^mediagen: warning: .*\n/m);
    expect(warning).toMatch(/^mediagen: warning: ffmpeg N-47683-g0e8eb07980-static \(FFmpeg 4\.1\) \(config\) is older than FFmpeg 5\.1: /);
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { status: string; media?: Record<string, string> };
    expect(ready).toMatchObject({ status: 'ready', media: { ffmpeg: 'N-47683-g0e8eb07980-static (FFmpeg 4.1) (config)', ffprobe: '5.1.6-0+deb12u1 (config)' } });
    // Never a server path.
    expect(JSON.stringify(ready)).not.toContain(bin);
  });

  it('gives no warning for a current ffmpeg', async () => {
    const bin = tempDir();
    const server = await startServer(['--port', '0', '--data-dir', tempDir()], {
      env: { MEDIAGEN_FFMPEG_PATH: fake(bin, 'ffmpeg', CURRENT), MEDIAGEN_FFPROBE_PATH: fake(bin, 'ffprobe', PROBE) },
    });
    await server.waitForStdout(/^mediagen: ffmpeg 5\.1\.6-0\+deb12u1 \(config\), ffprobe 5\.1\.6-0\+deb12u1 \(config\)\n/m);
    await server.stop();
    expect(server.stdout()).not.toContain('warning');
  });

  it('refuses to start with an ffmpeg_path that cannot be run, in one line naming the setting', async () => {
    const r = await run(['serve', '--port', '0', '--data-dir', tempDir(), '--ffmpeg-path', '/nonexistent/ffmpeg']);
    expect(oneLineError(r)).toMatch(/cannot run ffmpeg at \/nonexistent\/ffmpeg \(ffmpeg_path\)/);
  });
});
