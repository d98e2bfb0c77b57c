import { Agent, fetch } from 'undici';
import type { Response } from 'undici';

/**
 * A job event stream read over real HTTP (app.inject cannot stream): each block of the
 * `text/event-stream` body, a comment (`: ping`) or an event with its id, name and JSON data.
 */
export type SseItem =
  | { readonly kind: 'comment'; readonly text: string }
  | { readonly kind: 'event'; readonly id: string | undefined; readonly event: string; readonly data: Record<string, unknown>; readonly retry?: string | undefined };

export interface SseStream {
  readonly res: Response;
  /** The next block, or undefined once the server closed the stream. */
  next(): Promise<SseItem | undefined>;
  /** Events (comments skipped) until one named `until` (included) or the end. */
  eventsUntil(until: (e: Extract<SseItem, { kind: 'event' }>) => boolean): Promise<Extract<SseItem, { kind: 'event' }>[]>;
  /** Goes away as a client would: the connection is closed. */
  close(): void;
}

export async function openEvents(base: string, path: string, token: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  // A connection of its own, gone with the stream: no kept-alive socket outlives it.
  const agent = new Agent({ pipelining: 0 });
  const res = await fetch(new URL(path, base), {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal: abort.signal,
    dispatcher: agent,
  });
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let done = false;
  const next = async (): Promise<SseItem | undefined> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        return parse(block);
      }
      if (done || !reader) return undefined;
      try {
        const chunk = await reader.read();
        if (chunk.done) done = true;
        else buffered += decoder.decode(chunk.value, { stream: true });
      } catch {
        done = true;
      }
    }
  };
  return {
    res,
    next,
    async eventsUntil(until) {
      const events: Extract<SseItem, { kind: 'event' }>[] = [];
      for (;;) {
        const item = await next();
        if (!item) return events;
        if (item.kind !== 'event') continue;
        events.push(item);
        if (until(item)) return events;
      }
    },
    close: () => {
      abort.abort();
      void agent.destroy().catch(() => undefined);
    },
  };
}

function parse(block: string): SseItem {
  const lines = block.split('\n');
  if (lines.every((l) => l.startsWith(':'))) return { kind: 'comment', text: lines.map((l) => l.slice(1).trim()).join('\n') };
  const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
  const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
  return { kind: 'event', id: field('id'), event: field('event') ?? 'message', data: JSON.parse(data) as Record<string, unknown>, retry: field('retry') };
}
