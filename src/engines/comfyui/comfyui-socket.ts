import { WebSocket } from 'undici';

/**
 * ComfyUI's `/ws?clientId=` socket (server.py `websocket_handler`): JSON text messages
 * `{type, data}` for the prompts queued with that `client_id` (`execution_start`, `executing`,
 * `progress` {value, max}, `executed`, `execution_success`, `execution_error`,
 * `execution_interrupted`, ...), and binary preview frames, which are ignored here.
 */
export interface ComfyMessage {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface ProgressSocket {
  /** False once the socket closed or broke: the engine then polls. */
  alive(): boolean;
  close(): void;
}

/**
 * Opens the socket; resolves undefined when it cannot connect within `timeoutMs` (an old proxy, a
 * firewall): the run then follows its prompt by polling `/history`. `onGone` is called once when
 * an open socket drops.
 */
export function openProgressSocket(
  baseUrl: string,
  clientId: string,
  timeoutMs: number,
  onMessage: (message: ComfyMessage) => void,
  onGone: () => void,
): Promise<ProgressSocket | undefined> {
  const url = new URL(`${baseUrl}/ws`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('clientId', clientId);
  return new Promise((resolve) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(url.href);
    } catch {
      resolve(undefined);
      return;
    }
    let open = false;
    let gone = false;
    const timer = setTimeout(() => {
      ws.close();
      resolve(undefined);
    }, timeoutMs);
    const end = () => {
      clearTimeout(timer);
      if (!open) resolve(undefined);
      else if (!gone) {
        gone = true;
        onGone();
      }
    };
    ws.addEventListener('open', () => {
      clearTimeout(timer);
      open = true;
      resolve({
        alive: () => !gone,
        close: () => {
          gone = true;
          ws.close();
        },
      });
    });
    ws.addEventListener('error', end);
    ws.addEventListener('close', end);
    ws.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return;
      }
      const m = parsed as { type?: unknown; data?: unknown };
      if (typeof m?.type === 'string' && typeof m.data === 'object' && m.data !== null) onMessage({ type: m.type, data: m.data as Record<string, unknown> });
    });
  });
}
