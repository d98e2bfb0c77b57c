import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Lingering close, as nginx and Apache do it: an answer sent before the request's body arrived (a
 * body over the limit, a refused token, a full quota, the storage guard) closes the connection,
 * but not at once. Closing a socket whose client is still sending makes the kernel answer the next
 * bytes with a reset, and clients that write the whole body before reading (Python's http.client,
 * Node's fetch) then fail with a broken pipe and never read the answer. So: the answer goes out,
 * the server half-closes (FIN after the answer), keeps reading and dropping what the client still
 * sends, and closes once the client closes its side (it has read the answer), or `ms` or `bytes`
 * run out. A slow client holds its socket no longer than `ms`, and the connection cap counts it
 * meanwhile: the socket stays one of the server's connections until it is closed.
 */

export interface LingerLimits {
  readonly ms: number;
  readonly bytes: number;
}

const limitsOf = new WeakMap<Server, LingerLimits>();

/** The bounds of a server's lingering sockets (ServerLimits.lingerMs, lingerBytes). */
export function setLingerLimits(server: Server, limits: LingerLimits): void {
  limitsOf.set(server, limits);
}

/**
 * Makes the connection of `req`, being answered before its body was read whole with
 * `Connection: close`, linger once the answer is sent instead of closing at once. Node ends such a
 * response by calling the socket's `destroySoon` (its http server does, for `Connection: close`);
 * that call is what is replaced, for this socket only.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket as Socket & { server?: Server; destroySoon?: () => void };
  if (!socket || socket.destroyed || (socket as { lingering?: boolean }).lingering) return;
  const limits = (socket.server && limitsOf.get(socket.server)) ?? { ms: 5000, bytes: 256 * 1024 * 1024 };
  (socket as { lingering?: boolean }).lingering = true;
  socket.destroySoon = () => {
    if (socket.destroyed) return;
    let seen = 0;
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, limits.ms);
    timer.unref();
    // The answer first: end() sends the FIN once what was written is flushed.
    socket.end();
    takeOverReading(socket, (chunk) => {
      seen += chunk.length;
      if (seen > limits.bytes) close();
    });
    // The client closes its side once it has sent everything (or given up).
    socket.once('end', close);
    socket.once('close', () => clearTimeout(timer));
  };
}

type HttpSocket = Socket & {
  parser?: { _consumed?: boolean; unconsume?: () => void } | null;
  _paused?: boolean;
  _handle?: { reading?: boolean; readStart?: () => number } | null;
};

/**
 * Reads the socket ourselves, dropping every byte. Node's http server reads a request straight
 * from the socket's handle into its parser and stops reading once the response that ends the
 * connection is sent (its request body, refused, is never consumed); this detaches the parser, as
 * Node does itself for an upgrade, and restarts reading with a listener of our own. These are
 * internals of Node's http server (`_http_server.js`, Node 20), checked by
 * test/security/lingering-close.test.ts.
 */
function takeOverReading(socket: HttpSocket, onData: (chunk: Buffer) => void): void {
  const parser = socket.parser;
  if (parser?._consumed && parser.unconsume) {
    parser.unconsume();
    parser._consumed = false;
  }
  socket.removeAllListeners('data');
  socket.removeAllListeners('pause');
  socket.removeAllListeners('resume');
  socket.on('data', onData);
  socket._paused = false;
  socket.resume();
  const handle = socket._handle;
  if (handle && !handle.reading && handle.readStart) {
    handle.reading = true;
    handle.readStart();
  }
}
