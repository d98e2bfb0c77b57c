import { locateFfmpeg } from './ffmpeg.js';
import { locateFfprobe } from './ffprobe.js';
import { CURRENT_RELEASE, describeVersion, isCurrent } from './ffmpeg-version.js';
import type { LocatedBinary } from './locate-binary.js';

/**
 * The ffmpeg and ffprobe this process runs, as `serve`'s start line and `/readyz` name them: the
 * config's (`ffmpeg_path`, `ffprobe_path`), else PATH's, else the bundled ones. A build older than
 * FFmpeg 5.1 (the bundled ffmpeg is 4.1, from 2018) is used with a warning at start.
 */
export interface MediaTools {
  readonly ffmpeg: LocatedBinary;
  readonly ffprobe: LocatedBinary;
}

/** Points the locators at the config's paths (undefined: PATH, else bundled); call before any locate. */
export function configureMediaTools(paths: { readonly ffmpegPath: string | undefined; readonly ffprobePath: string | undefined }): void {
  locateFfmpeg.configure(paths.ffmpegPath);
  locateFfprobe.configure(paths.ffprobePath);
}

export async function describeMediaTools(): Promise<MediaTools> {
  const [ffmpeg, ffprobe] = await Promise.all([locateFfmpeg.describe(), locateFfprobe.describe()]);
  return { ffmpeg, ffprobe };
}

/** `5.1.6-0+deb12u1 (PATH)`: the version and where the binary came from, never its path. */
export function toolDetail(t: LocatedBinary): string {
  return `${describeVersion(t.version)} (${t.source})`;
}

/** The start line's words: `ffmpeg 5.1.6-0+deb12u1 (PATH), ffprobe 5.1.6-0+deb12u1 (PATH)`. */
export function mediaToolsLine(t: MediaTools): string {
  return `ffmpeg ${toolDetail(t.ffmpeg)}, ffprobe ${toolDetail(t.ffprobe)}`;
}

/** One warning per tool older than FFmpeg 5.1, naming its version; none when both are current. */
export function mediaToolsWarnings(t: MediaTools): string[] {
  const current = CURRENT_RELEASE.join('.');
  return (['ffmpeg', 'ffprobe'] as const)
    .filter((name) => !isCurrent(t[name].version))
    .map((name) => {
      const tool = t[name];
      const how = tool.source === 'config' ? `set ${name}_path to` : `install (Debian: apt-get install ffmpeg) or set ${name}_path to`;
      return (
        `${name} ${describeVersion(tool.version)} (${tool.source}) is older than FFmpeg ${current}: it misses years of demuxer and decoder fixes ` +
        `for the inputs it reads; ${how} a ${name} of FFmpeg ${current} or later`
      );
    });
}
