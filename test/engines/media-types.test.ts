import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { mediaLimits } from '../../src/app/settings.js';
import { parseProbeReport } from '../../src/engines/media/ffprobe.js';
import { DEFAULT_MEDIA_LIMITS } from '../../src/engines/media/media-limits.js';
import { notAVideo, sniffImage, sniffVideo } from '../../src/engines/media/media-types.js';
import { checkVideoClaims } from '../../src/engines/local/video/video-probe.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('sniffVideo', () => {
  it.each([
    ['\0\0\0\x20ftypisom\0\0\x02\0', 'mp4'],
    ['\0\0\0\x14ftypqt  \0\0\0\0', 'mov'],
    ['\0\0\0\x08wide\0\0\0\x08mdat', 'mov'],
    ['\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm', 'webm'],
    ['\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska', 'matroska'],
  ])('accepts a container by its magic number (%j)', (head, type) => {
    expect(sniffVideo(bytes(head))).toEqual({ ok: true, type });
  });

  it.each([
    ['\xef\xbb\xbf  #EXTM3U\n#EXTINF:1,\nfile:///x', 'an HLS playlist'],
    ['#EXT-X-VERSION:3\n', 'an HLS playlist'],
    ['ffconcat version 1.0\nfile a.mp4\n', 'an ffmpeg concat list'],
    ['file /srv/x.mp4\n', 'an ffmpeg concat list'],
    ['[playlist]\nFile1=http://x\n', 'a PLS playlist'],
    ['v=0\no=- 0 0 IN IP4 127.0.0.1\n', 'an SDP session description'],
    ['<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', 'an SVG image'],
    ['<?xml version="1.0"?><MPD/>', 'a DASH manifest'],
    ['http://example.com/a.mp4\n', 'a list of URLs'],
    ['%PDF-1.7', 'a PDF document'],
    ['\0\0\0\x1cftypavif\0\0\0\0', 'an AVIF image'],
    ['\x89PNG\r\n\x1a\n', 'a PNG image'],
    ['', 'empty'],
    ['\x00\x01\x02\x03\x04garbage', 'not a file type it accepts'],
  ])('refuses %j as %s', (head, what) => {
    expect(sniffVideo(bytes(head))).toEqual({ ok: false, what });
  });

  it('words its refusal for the client', () => {
    expect(notAVideo('init_video', 'an HLS playlist')).toBe('init_video is an HLS playlist, not a video file; send an MP4, MOV or WebM file');
    expect(notAVideo('init_video', 'empty')).toBe('init_video is empty; send an MP4, MOV or WebM file');
  });
});

describe('sniffImage', () => {
  it.each([
    ['\xff\xd8\xff\xe0', 'jpeg'],
    ['\x89PNG\r\n\x1a\n', 'png'],
    ['GIF89a', 'gif'],
    ['RIFF\0\0\0\0WEBPVP8 ', 'webp'],
    ['II*\0', 'tiff'],
    ['\0\0\0\x1cftypheic\0\0\0\0', 'heif'],
  ])('accepts %j', (head, type) => {
    expect(sniffImage(bytes(head))).toEqual({ ok: true, type });
  });

  it('refuses SVG, PDF and videos by name', () => {
    expect(sniffImage(bytes('<svg xmlns="http://www.w3.org/2000/svg">'))).toEqual({ ok: false, what: 'an SVG image' });
    expect(sniffImage(bytes('%PDF-1.4'))).toEqual({ ok: false, what: 'a PDF document' });
    expect(sniffImage(bytes('\0\0\0\x20ftypisom\0\0\x02\0'))).toEqual({ ok: false, what: 'a video file' });
  });
});

describe('checkVideoClaims', () => {
  const report = (over: Partial<{ duration: number; frames: number; fps: number; width: number }> = {}) =>
    parseProbeReport(
      JSON.stringify({
        format: { format_name: 'matroska,webm', duration: String(over.duration ?? 2) },
        streams: [
          { codec_type: 'video', codec_name: 'vp9', width: over.width ?? 640, height: 360, avg_frame_rate: `${over.fps ?? 30}/1`, ...(over.frames ? { nb_frames: String(over.frames) } : {}) },
          { codec_type: 'audio', codec_name: 'opus' },
        ],
      }),
    );

  it('returns the length and whether there is sound when every claim is within its limit', () => {
    expect(checkVideoClaims('v', report(), DEFAULT_MEDIA_LIMITS)).toEqual({ seconds: 2, hasAudio: true });
  });

  it('counts frames from duration x frame rate when the container stores no count (WebM)', () => {
    const err = () => checkVideoClaims('v', report({ duration: 50, fps: 240 }), DEFAULT_MEDIA_LIMITS);
    expect(err).toThrow('v has 12,000 frames; at most 3,600 are accepted');
  });

  it('refuses a video without a duration', () => {
    const r = parseProbeReport(JSON.stringify({ format: {}, streams: [{ codec_type: 'video', width: 8, height: 8 }] }));
    expect(() => checkVideoClaims('v', r, DEFAULT_MEDIA_LIMITS)).toThrow('v is not a usable video: it has no duration (a still image?)');
  });
});

describe('limits', () => {
  it('the engine defaults are the documented setting defaults', () => {
    expect(mediaLimits(loadConfig({ env: {} }))).toEqual(DEFAULT_MEDIA_LIMITS);
  });
});
