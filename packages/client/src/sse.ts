/**
 * A small Server-Sent Events reader (the WHATWG event-stream format) over a fetch body, so the
 * stream can carry an Authorization header (EventSource cannot) and a Last-Event-ID of our choice.
 */

export interface SseEvent {
  /** The event type: `message` when the event named none. */
  readonly event: string;
  readonly data: string;
  /** The last event id seen on the stream so far (ids persist across events). */
  readonly lastEventId: string;
}

/** Lines in, events out; chunks may split lines (and a CR LF pair) anywhere. */
export class SseParser {
  lastEventId = '';
  /** The reconnection time the server asked for (`retry:`), in ms. */
  retryMs: number | undefined;
  #pending = '';
  #afterCr = false;
  #data: string[] = [];
  #event = '';

  /** The events completed by `chunk`. */
  feed(chunk: string): SseEvent[] {
    // A CR that ended the previous chunk may be the first half of a CR LF pair.
    if (this.#afterCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.#afterCr = false;
    this.#pending += chunk;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const cr = this.#pending.indexOf('\r', start);
      const lf = this.#pending.indexOf('\n', start);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      const line = this.#pending.slice(start, end);
      if (end === cr && cr === this.#pending.length - 1) this.#afterCr = true;
      start = end + (end === cr && this.#pending[cr + 1] === '\n' ? 2 : 1);
      const event = this.#line(line);
      if (event) events.push(event);
    }
    this.#pending = this.#pending.slice(start);
    return events;
  }

  /** The end of the stream: an event not terminated by a blank line is dropped, as the format says. */
  end(): SseEvent[] {
    this.#pending = '';
    this.#data = [];
    this.#event = '';
    this.#afterCr = false;
    return [];
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.#data.length === 0) {
        this.#event = '';
        return undefined;
      }
      const event = { event: this.#event || 'message', data: this.#data.join('\n'), lastEventId: this.lastEventId };
      this.#data = [];
      this.#event = '';
      return event;
    }
    if (line.startsWith(':')) return undefined; // a comment: the server's heartbeat
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}

/**
 * The events of a `text/event-stream` body, until it ends. Each chunk read resets `onActivity`
 * (heartbeats included), so a caller can tell a silent connection from a quiet job.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>, parser: SseParser, onActivity?: () => void): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onActivity?.();
      yield* parser.feed(decoder.decode(value, { stream: true }));
    }
    yield* parser.feed(decoder.decode());
    yield* parser.end();
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
