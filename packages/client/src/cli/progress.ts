import type { Job } from '../index.js';
import { isTerminal } from '../index.js';

/**
 * A waited-for job's progress on stderr (stdout stays for the result): on a terminal, one status
 * line with a bar, redrawn in place; piped, one plain line per change.
 */
export interface Progress {
  update(job: Job): void;
  /** Ends the display (the TTY line is finished with a newline). */
  stop(): void;
}

interface Sink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** How far along each status is, for the bar (the server reports no finer progress). */
const STAGE: Readonly<Record<string, number>> = {
  backlogged: 0.05,
  queued: 0.1,
  scheduled: 0.2,
  processing: 0.4,
  sampling: 0.6,
  'intermediate-complete': 0.8,
};
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const BAR_WIDTH = 24;
const REDRAW_MS = 125;

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The fraction done: the job's own `progress` when the server sends one, else its status's stage. */
function fractionOf(job: Job): number {
  if (isTerminal(job.status)) return 1;
  const own = (job as { progress?: unknown }).progress;
  if (typeof own === 'number' && own >= 0 && own <= 1) return Math.max(STAGE[job.status] ?? 0, own);
  return STAGE[job.status] ?? 0;
}

export function progressFor(sink: Sink, now: () => number = Date.now): Progress {
  return sink.isTTY ? new TtyProgress(sink, now) : new LineProgress(sink, now);
}

class LineProgress implements Progress {
  readonly #start: number;
  #last = '';

  constructor(
    private readonly sink: Sink,
    private readonly now: () => number,
  ) {
    this.#start = now();
  }

  update(job: Job): void {
    if (job.status === this.#last) return;
    this.#last = job.status;
    this.sink.write(`job ${job.job_id} ${job.status} after ${seconds(this.now() - this.#start)}\n`);
  }

  stop(): void {}
}

class TtyProgress implements Progress {
  readonly #start: number;
  #job: Job | undefined;
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly sink: Sink,
    private readonly now: () => number,
  ) {
    this.#start = now();
    this.#timer = setInterval(() => this.#draw(), REDRAW_MS);
    this.#timer.unref?.();
  }

  update(job: Job): void {
    this.#job = job;
    this.#draw();
  }

  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#draw();
    this.sink.write('\n');
  }

  #draw(): void {
    const job = this.#job;
    if (!job) return;
    const done = Math.round(fractionOf(job) * BAR_WIDTH);
    const mark = isTerminal(job.status) ? (job.status === 'completed' ? '✔' : '✖') : SPINNER[this.#frame++ % SPINNER.length];
    const line = `${mark} ${job.status.padEnd(21)} [${'█'.repeat(done)}${'░'.repeat(BAR_WIDTH - done)}] ${seconds(this.now() - this.#start).padStart(8)}  ${job.job_id}`;
    const width = this.sink.columns || 80;
    this.sink.write(`\r\x1b[2K${line.slice(0, Math.max(20, width - 1))}`);
  }
}
