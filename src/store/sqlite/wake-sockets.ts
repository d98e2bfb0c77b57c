import { mkdirSync, readdirSync, unlinkSync, watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { decodeJobEvent, encodeJobEvent } from '../job-event-codec.js';
import type { JobEvent } from '../store.js';

/** Unix socket paths longer than this cannot be bound (sun_path is 108 bytes on Linux). */
const MAX_SOCKET_PATH = 100;

/** How long closing waits for the events written to a peer to go out before cutting its connection. */
const FLUSH_MS = 1000;

/** `<pid>-<random>.sock`: the pid tells a dead process's leftover socket from a live one. */
const SOCKET_NAME = /^(\d+)-[0-9a-f]+\.sock$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Cross-process wake-ups for processes sharing one SQLite file, which has no NOTIFY: every
 * process that listens binds a unix socket in `<data dir>/wake/`, and every committed event is
 * written, one JSON line, to each socket there but its own. A lost event (a socket not yet bound, a
 * process gone) costs only the wait for the poll, which stays the backstop. Measured against
 * fs.watch on a shared file in docs/decisions.md.
 */
export class WakeSockets {
  readonly #dir: string;
  readonly #ownName: string;
  readonly #listeners = new Set<(event: JobEvent) => void>();
  /** Open connections to other processes' sockets, by file name. */
  readonly #peers = new Map<string, net.Socket>();
  #names: string[] | undefined;
  #watcher: FSWatcher | undefined;
  #server: net.Server | undefined;
  /** Connections other processes opened to this one; ended when it stops listening. */
  readonly #incoming = new Set<net.Socket>();
  #starting: Promise<void> | undefined;
  #closed = false;

  constructor(dir: string) {
    this.#dir = dir;
    this.#ownName = `${process.pid}-${randomBytes(6).toString('hex')}.sock`;
  }

  /** Starts receiving other processes' events; the returned function stops. */
  async listen(fn: (event: JobEvent) => void): Promise<() => Promise<void>> {
    this.#listeners.add(fn);
    this.#starting ??= this.#bind();
    await this.#starting;
    return async () => {
      this.#listeners.delete(fn);
      if (this.#listeners.size === 0) await this.#unbind();
    };
  }

  /** Sends a committed event to every other listening process; never throws, never waits. */
  publish(event: JobEvent): void {
    if (this.#closed) return;
    const line = `${encodeJobEvent(event)}\n`;
    for (const name of this.#socketNames()) {
      if (name === this.#ownName) continue;
      this.#peer(name)?.write(line);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#watcher?.close();
    // Events published just before closing still reach their peers (a short-lived process such as
    // the admin CLI): each connection is ended after its writes, and cut only if that takes long.
    const flushed = [...this.#peers.values()].map(
      (s) =>
        new Promise<void>((resolve) => {
          const cut = setTimeout(() => s.destroy(), FLUSH_MS);
          s.once('close', () => {
            clearTimeout(cut);
            resolve();
          });
          s.end();
        }),
    );
    this.#peers.clear();
    await Promise.all(flushed);
    await this.#unbind();
  }

  /** The socket files in the wake dir, re-read when the directory changes. */
  #socketNames(): string[] {
    if (this.#names) return this.#names;
    try {
      mkdirSync(this.#dir, { recursive: true });
      if (!this.#watcher) {
        this.#watcher = watch(this.#dir, () => (this.#names = undefined));
        this.#watcher.on('error', () => (this.#watcher = undefined));
        // A watcher must not keep a process alive.
        this.#watcher.unref();
      }
      const names = readdirSync(this.#dir).filter((n) => SOCKET_NAME.test(n));
      // Without a watcher, read the directory every time rather than miss a new listener.
      if (this.#watcher) this.#names = names;
      return names;
    } catch {
      return [];
    }
  }

  #peer(name: string): net.Socket | undefined {
    const open = this.#peers.get(name);
    if (open) return open;
    const path = join(this.#dir, name);
    const socket = net.createConnection(path);
    socket.unref();
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A leftover of a process that died without removing it: remove it for everyone.
      const pid = Number(SOCKET_NAME.exec(name)?.[1]);
      if ((err.code === 'ECONNREFUSED' || err.code === 'ENOENT') && !alive(pid)) {
        try {
          unlinkSync(path);
        } catch {
          // Someone else removed it first.
        }
      }
    });
    socket.on('close', () => {
      if (this.#peers.get(name) === socket) this.#peers.delete(name);
    });
    // Nothing comes back on this connection.
    socket.resume();
    this.#peers.set(name, socket);
    return socket;
  }

  async #bind(): Promise<void> {
    const path = join(this.#dir, this.#ownName);
    // Too long a data dir path: no wake-ups, only the poll (the same as before they existed).
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return;
    mkdirSync(this.#dir, { recursive: true });
    const server = net.createServer((conn) => {
      this.#incoming.add(conn);
      conn.on('close', () => this.#incoming.delete(conn));
      conn.setEncoding('utf8');
      let buffered = '';
      conn.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const event = decodeJobEvent(buffered.slice(0, nl));
          buffered = buffered.slice(nl + 1);
          if (event) for (const fn of this.#listeners) fn(event);
        }
      });
      conn.on('error', () => undefined);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Like PostgreSQL's LISTEN connection, a listening socket keeps the process alive until stopped.
    this.#server = server;
  }

  async #unbind(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#starting = undefined;
    if (!server) return;
    // close() waits for open connections: other processes keep theirs, so end them here.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const conn of this.#incoming) conn.destroy();
    await closed;
    try {
      unlinkSync(join(this.#dir, this.#ownName));
    } catch {
      // Already gone.
    }
  }
}
