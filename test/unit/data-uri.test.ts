import { describe, expect, it } from 'vitest';
import { DataUriError, decodeDataUri, formatBytes } from '../../src/lib/data-uri.js';

const PNG_HEADER = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function failure(uri: string, maxBytes?: number): DataUriError {
  try {
    decodeDataUri(uri, maxBytes === undefined ? {} : { maxBytes });
  } catch (err) {
    expect(err).toBeInstanceOf(DataUriError);
    return err as DataUriError;
  }
  throw new Error(`decoded ${uri.slice(0, 40)}`);
}

describe('decoding data: URIs', () => {
  it('decodes base64 data with its media type', () => {
    const r = decodeDataUri(`data:image/png;base64,${PNG_HEADER.toString('base64')}`);
    expect(r.mediaType).toBe('image/png');
    expect(r.data.equals(PNG_HEADER)).toBe(true);
  });

  it('decodes percent-encoded data, with UTF-8 for characters left as they are', () => {
    const r = decodeDataUri('data:text/plain;charset=utf-8,hello%20world%21%00%FF é');
    expect(r.mediaType).toBe('text/plain');
    expect([...r.data]).toEqual([...Buffer.from('hello world!'), 0x00, 0xff, 0x20, 0xc3, 0xa9]);
  });

  it('defaults the media type to text/plain and lower-cases the one given', () => {
    expect(decodeDataUri('data:,A').mediaType).toBe('text/plain');
    expect(decodeDataUri('data:;base64,QQ==').mediaType).toBe('text/plain');
    expect(decodeDataUri('DATA:Image/JPEG;BASE64,QQ==').mediaType).toBe('image/jpeg');
  });

  it('accepts empty data, base64 without padding and percent-encoded base64 characters', () => {
    expect(decodeDataUri('data:image/png;base64,').data.length).toBe(0);
    expect(decodeDataUri('data:,').data.length).toBe(0);
    expect(decodeDataUri('data:text/plain;base64,QUI').data.toString()).toBe('AB');
    expect(decodeDataUri('data:text/plain;base64,%2B%2F8%3D').data).toEqual(Buffer.from([0xfb, 0xff]));
  });

  it('accepts quoted and token parameters before ;base64', () => {
    expect(decodeDataUri('data:image/svg+xml;name="a b.svg";charset=utf-8;base64,QQ==').mediaType).toBe('image/svg+xml');
  });
});

describe('refusing malformed data: URIs', () => {
  it.each([
    ['image/png;base64,QQ==', 'it does not start with "data:"'],
    ['https://example.com/a.png', 'it does not start with "data:"'],
    ['data:image/png;base64', 'no comma separates the media type from the data'],
    ['data:image;base64,QQ==', 'bad media type "image"'],
    ['data:image/png/x;base64,QQ==', 'bad media type "image/png/x"'],
    ['data:image/png;charset;base64,QQ==', 'bad media type parameter "charset"'],
    ['data:image/png;base64,QQ=*', 'the base64 data contains characters outside the base64 alphabet'],
    ['data:image/png;base64,QQ Q=', 'the base64 data contains characters outside the base64 alphabet'],
    ['data:image/png;base64,Q-_Q', 'the base64 data contains characters outside the base64 alphabet'],
    ['data:image/png;base64,QQ=A', 'the base64 data contains characters outside the base64 alphabet'],
    ['data:image/png;base64,QUJDR', 'the base64 data has a wrong length'],
    ['data:image/png;base64,QQ=', 'the base64 data has a wrong length'],
    ['data:text/plain,100%', 'bad percent escape at offset 3'],
    ['data:text/plain,%zz', 'bad percent escape at offset 0'],
    ['data:image/png;base64,%4', 'bad percent escape at offset 0'],
  ])('%j: %s', (uri, why) => {
    const err = failure(uri);
    expect(err.reason).toBe('malformed');
    expect(err.message).toBe(`data: URI is malformed: ${why}`);
  });

  it('does not echo the data in its message', () => {
    const secret = 'c2VjcmV0c2VjcmV0';
    expect(failure(`data:image/png;base64,${secret}*`).message).not.toContain(secret);
  });
});

describe('the size limit', () => {
  it('accepts data up to the limit', () => {
    expect(decodeDataUri(`data:;base64,${Buffer.alloc(300).toString('base64')}`, { maxBytes: 300 }).data.length).toBe(300);
    expect(decodeDataUri(`data:,${'a'.repeat(300)}`, { maxBytes: 300 }).data.length).toBe(300);
  });

  it('refuses data over the limit, base64 or percent-encoded', () => {
    for (const uri of [`data:;base64,${Buffer.alloc(301).toString('base64')}`, `data:,${'a'.repeat(301)}`, `data:,${'%41'.repeat(301)}`]) {
      const err = failure(uri, 300);
      expect(err.reason).toBe('too_large');
      expect(err.message).toBe('data: URI is larger than 300 bytes');
    }
  });

  it('refuses a huge URI before decoding it', () => {
    const err = failure(`data:image/png;base64,${'A'.repeat(8 * 1024 * 1024)}*`, 5 * 1024 * 1024);
    expect(err.reason).toBe('too_large');
    expect(err.message).toBe('data: URI is larger than 5 MiB');
  });

  it('formats sizes for messages', () => {
    expect(formatBytes(512)).toBe('512 bytes');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MiB');
  });
});
