import pg from 'pg';
import { decodeJobEvent } from '../job-event-codec.js';
import type { JobEvent } from '../store.js';

/** How long to wait before reconnecting a dropped LISTEN connection. */
const RECONNECT_MS = 1000;

/**
 * One dedicated connection that LISTENs on the job channel, opened when the first listener
 * arrives. If it drops (a database restart), it reconnects; events sent meanwhile are lost, which
 * the workers' poll makes good.
 */
export class PgListener {
  readonly #url: string;
  readonly #channel: string;
  readonly #listeners = new Set<(event: JobEvent) => void>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #self: string | undefined;

  /** `self`: the origin this process's store sends its events with; those are not relayed back to it. */
  constructor(url: string, channel: string, self?: string) {
    this.#url = url;
    this.#channel = channel;
    this.#self = self;
  }

  /** Starts listening; if the database cannot be reached now, it keeps trying in the background. */
  async listen(fn: (event: JobEvent) => void): Promise<() => Promise<void>> {
    this.#listeners.add(fn);
    this.#connecting ??= this.#connect().catch(() => this.#reconnect());
    await this.#connecting;
    return async () => {
      this.#listeners.delete(fn);
      if (this.#listeners.size === 0) await this.close();
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    client.on('notification', (msg) => {
      // Anyone with database access may NOTIFY on the channel: what is not an event of ours is dropped.
      const event = decodeJobEvent(msg.payload, this.#self);
      if (event) for (const fn of this.#listeners) fn(event);
    });
    client.on('error', () => this.#reconnect(client));
    client.on('end', () => this.#reconnect(client));
    try {
      await client.connect();
      // The channel name is a constant of ours, never input: safe to splice into the statement.
      await client.query(`LISTEN ${this.#channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.#closed) {
      await client.end();
      return;
    }
    this.#client = client;
  }

  /** `dropped`: the connection that failed; events of older connections are ignored. */
  #reconnect(dropped?: pg.Client): void {
    if (this.#closed || (dropped && this.#client !== dropped)) return;
    this.#client = undefined;
    dropped?.end().catch(() => undefined);
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#connecting = this.#connect().catch(() => this.#reconnect());
    }, RECONNECT_MS);
    this.#retry.unref();
  }
}
