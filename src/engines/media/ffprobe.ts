import { runTool } from './ffmpeg.js';
import { demuxedInputArgs } from './media-types.js';
import { binaryLocator, npmBinary } from './locate-binary.js';

/**
 * Locating and running ffprobe, whose JSON report is how an input video's claims (duration,
 * frames, frame size, streams) are read before anything decodes it. ffprobe on PATH when there is
 * one, else the binary that `@ffprobe-installer/ffprobe` ships inside its per-platform package
 * (no download at install time). docs/engine.md records the versions.
 */

/** Caps on what ffprobe reads and analyses before it reports: 5 MB and 5 s of media. */
export const PROBE_SIZE_BYTES = 5_000_000;
export const PROBE_ANALYZE_US = 5_000_000;
/** ffprobe reads headers and a few packets; a run longer than this is itself a sign of abuse. */
export const PROBE_TIMEOUT_MS = 10_000;
/** The JSON report of a file with a handful of streams is a few KB; a huge one is cut here. */
const PROBE_MAX_STDOUT = 1024 * 1024;

export interface ProbedStream {
  readonly type: string;
  readonly codec: string;
  readonly width: number;
  readonly height: number;
  /** Seconds, or NaN when the stream does not say. */
  readonly duration: number;
  /** The stream's frame count as stored (`nb_frames`), else NaN. */
  readonly frames: number;
  /** Frames per second (average, else the base rate), else NaN. */
  readonly fps: number;
  /** Degrees the picture is turned when shown (display matrix, else the `rotate` tag), else 0. */
  readonly rotation: number;
  /** A still attached to the file (an MP3's cover art), not a video to play. */
  readonly attachedPic: boolean;
}

export interface ProbeReport {
  readonly formatName: string;
  /** Seconds, or NaN when the container does not say. */
  readonly duration: number;
  readonly streams: readonly ProbedStream[];
}

interface RawStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  nb_frames?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string };
  side_data_list?: { rotation?: number }[];
}

interface RawReport {
  format?: { format_name?: string; duration?: string };
  streams?: RawStream[];
}

function number(text: string | number | undefined): number {
  if (text === undefined || text === '' || text === 'N/A') return NaN;
  const n = Number(text);
  return Number.isFinite(n) ? n : NaN;
}

/** `'30000/1001'` → 29.97; `'0/0'` → NaN. */
function rate(text: string | undefined): number {
  const m = /^(\d+)\/(\d+)$/.exec(text ?? '');
  if (!m || Number(m[2]) === 0 || Number(m[1]) === 0) return NaN;
  return Number(m[1]) / Number(m[2]);
}

export function parseProbeReport(json: string): ProbeReport {
  const raw = JSON.parse(json) as RawReport;
  const streams = (raw.streams ?? []).map(
    (s): ProbedStream => ({
      type: s.codec_type ?? 'unknown',
      codec: s.codec_name ?? 'unknown',
      width: number(s.width),
      height: number(s.height),
      duration: number(s.duration),
      frames: number(s.nb_frames),
      fps: Number.isNaN(rate(s.avg_frame_rate)) ? rate(s.r_frame_rate) : rate(s.avg_frame_rate),
      rotation: number(s.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? s.tags?.rotate) || 0,
      attachedPic: s.disposition?.attached_pic === 1,
    }),
  );
  return { formatName: raw.format?.format_name ?? 'unknown', duration: number(raw.format?.duration), streams };
}

/**
 * The probe of one server-written file, read only as `demuxer`: no other protocol than `file`, no
 * external references (`enable_drefs` stays off for ISO-BMFF), bounded reading and analysis.
 * Rejects with FfmpegError when ffprobe cannot read it, DecodeBudgetError past its timeout.
 */
export async function probeFile(ffprobePath: string, path: string, demuxer: string, signal: AbortSignal): Promise<ProbeReport> {
  const args = [
    '-hide_banner',
    '-v', 'error',
    '-probesize', String(PROBE_SIZE_BYTES),
    '-analyzeduration', String(PROBE_ANALYZE_US),
    '-print_format', 'json',
    '-show_format',
    '-show_streams',
    ...demuxedInputArgs(path, demuxer),
  ];
  const { stdout } = await runTool(ffprobePath, args, {
    signal,
    name: 'ffprobe',
    budget: { wallMs: PROBE_TIMEOUT_MS },
    maxStdout: PROBE_MAX_STDOUT,
  });
  return parseProbeReport(stdout);
}

/** The ffprobe binary: `explicit` if given, else `ffprobe` on PATH, else the npm package's. */
export const locateFfprobe = binaryLocator({
  name: 'ffprobe',
  probeArgs: ['-hide_banner', '-version'],
  accepts: () => true,
  bundled: npmBinary('@ffprobe-installer/ffprobe', 'ffprobe'),
});
