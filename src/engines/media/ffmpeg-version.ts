/**
 * What an ffmpeg or ffprobe build says of itself (`-version`): its version string and the FFmpeg
 * release it corresponds to. A release build says `ffmpeg version 5.1.6-0+deb12u1`; a snapshot
 * (the static builds the npm packages ship) says `N-47683-g0e8eb07980`, and only its libavcodec
 * version tells which release it is at.
 */

export interface ToolVersion {
  /** As the banner writes it: `5.1.6-0+deb12u1`, `N-47683-g0e8eb07980-static`. */
  readonly banner: string;
  /** The FFmpeg release, `[major, minor]`: the banner's, or the one its libavcodec came with. */
  readonly release: readonly [number, number] | undefined;
}

/** The oldest release used without a warning: five years of demuxer and decoder fixes after 4.1. */
export const CURRENT_RELEASE = [5, 1] as const;

/** libavcodec's major.minor at each FFmpeg release, oldest first. */
const LIBAVCODEC_AT: readonly (readonly [number, number, number, number])[] = [
  [58, 18, 4, 0],
  [58, 35, 4, 1],
  [58, 54, 4, 2],
  [58, 91, 4, 3],
  [58, 134, 4, 4],
  [59, 18, 5, 0],
  [59, 37, 5, 1],
  [60, 3, 6, 0],
  [60, 31, 6, 1],
  [61, 3, 7, 0],
  [61, 19, 7, 1],
];

export function parseToolVersion(stdout: string): ToolVersion | undefined {
  const banner = /^\S+ version (\S+)/m.exec(stdout)?.[1];
  if (!banner) return undefined;
  const release = /^n?(\d+)\.(\d+)/.exec(banner);
  if (release) return { banner, release: [Number(release[1]), Number(release[2])] };
  const codec = /^\s*libavcodec\s+(\d+)\.\s*(\d+)\./m.exec(stdout);
  if (!codec) return { banner, release: undefined };
  const [major, minor] = [Number(codec[1]), Number(codec[2])];
  const at = LIBAVCODEC_AT.filter(([M, m]) => major > M || (major === M && minor >= m)).at(-1);
  return { banner, release: at ? [at[2], at[3]] : undefined };
}

/** Whether the build is of CURRENT_RELEASE or later; an unknown release is not. */
export function isCurrent(v: ToolVersion | undefined): boolean {
  const r = v?.release;
  return !!r && (r[0] > CURRENT_RELEASE[0] || (r[0] === CURRENT_RELEASE[0] && r[1] >= CURRENT_RELEASE[1]));
}

/** `5.1.6-0+deb12u1`, or `N-47683-g0e8eb07980-static (FFmpeg 4.1)` for a snapshot; `unknown version`. */
export function describeVersion(v: ToolVersion | undefined): string {
  if (!v) return 'unknown version';
  if (!v.release || /^n?\d+\.\d+/.test(v.banner)) return v.banner;
  return `${v.banner} (FFmpeg ${v.release.join('.')})`;
}
