/**
 * The encoder flags every local video shares. Bit-exact flags and a fixed thread count make the
 * bytes a function of the inputs alone (x264's output depends on its thread count); docs/engine.md
 * states the promise.
 */

export const FPS = 24;

/** Two threads: measured byte-identical across runs, and a 2-core machine stays busy. */
const THREADS = '2';

/** `fps`: the output's constant frame rate (the local models' 24 unless a model keeps or sets another). */
export function h264Args(fps: number | string = FPS): string[] {
  return [
    '-c:v', 'libx264',
    '-preset', 'ultrafast',
    '-threads', THREADS,
    '-pix_fmt', 'yuv420p',
    '-r', String(fps),
  ];
}

export const AUDIO_RATE = 48_000;

/** The AAC encoder's priming: ffmpeg 4.1's MP4 muxer counts it in the track's duration. */
const AAC_PRIMING_SAMPLES = 1024;

/**
 * An `atrim` that ends the audio where the track, priming included, lasts exactly `seconds`
 * (with the bundled ffmpeg; builds that write an edit list for the priming end 21 ms short).
 */
export function audioTrim(seconds: number): string {
  return `atrim=end_sample=${Math.max(0, Math.round(seconds * AUDIO_RATE) - AAC_PRIMING_SAMPLES)}`;
}

export function aacArgs(): string[] {
  return ['-c:a', 'aac', '-b:a', '128k', '-ar', String(AUDIO_RATE)];
}

/** Container flags, last before the output path. */
export function mp4Args(): string[] {
  return [
    '-fflags', '+bitexact',
    '-flags:v', '+bitexact',
    '-flags:a', '+bitexact',
    '-map_metadata', '-1',
    '-movflags', '+faststart',
    '-f', 'mp4',
  ];
}
