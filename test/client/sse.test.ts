import { describe, expect, it } from 'vitest';
import { SseParser } from '../../packages/client/src/sse.js';

const STREAM =
  ': ping\n\n' +
  'id: 1\nevent: status\ndata: {"status":"queued"}\n\n' +
  'id: 2\r\nevent: status\r\ndata: {"status":\r\ndata: "processing"}\r\n\r\n' +
  'retry: 2500\rid: 3\revent: end\rdata:{"status":"completed"}\r\r';

describe('the client SSE parser', () => {
  it('reads events, ids, multi-line data, comments, retry and all three line endings', () => {
    const parser = new SseParser();
    const events = parser.feed(STREAM);
    expect(events).toEqual([
      { event: 'status', data: '{"status":"queued"}', lastEventId: '1' },
      { event: 'status', data: '{"status":\n"processing"}', lastEventId: '2' },
      { event: 'end', data: '{"status":"completed"}', lastEventId: '3' },
    ]);
    expect(parser.retryMs).toBe(2500);
  });

  it('gives the same events however the stream is cut into chunks, a CR LF pair split included', () => {
    const whole = new SseParser().feed(STREAM);
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < STREAM.length; i += size) events.push(...parser.feed(STREAM.slice(i, i + size)));
      events.push(...parser.end());
      expect(events, `chunks of ${size}`).toEqual(whole);
    }
  });

  it('drops an event the stream ended before finishing, keeps the last id, and names unnamed events message', () => {
    const parser = new SseParser();
    expect(parser.feed('data: a\n\nid: 7\ndata: half')).toEqual([{ event: 'message', data: 'a', lastEventId: '' }]);
    expect(parser.end()).toEqual([]);
    expect(parser.lastEventId).toBe('7');
    expect(parser.feed('id\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('');
  });
});
