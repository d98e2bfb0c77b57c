/**
 * A job's status as a step of its way (docs/states.md), for a determinate progress bar. Pure:
 * test/console/playground-logic.test.ts runs it in Node.
 */

/** The way a job goes when all is well; `backlogged` waits before `queued`. */
export const STEPS = ['queued', 'scheduled', 'processing', 'sampling', 'intermediate-complete', 'completed'] as const;

const WORDS: Record<string, string> = {
  backlogged: 'Waiting for a free slot in the workspace',
  queued: 'Waiting for a worker',
  scheduled: 'A worker has it',
  processing: 'Fetching and checking the inputs',
  sampling: 'Generating',
  'intermediate-complete': 'A preview is ready',
  completed: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

export interface Progress {
  /** From 0 to 1; undefined for a job that ended without completing (no bar then). */
  readonly value: number | undefined;
  /** "Step 4 of 6", or undefined off the way. */
  readonly step: string | undefined;
  /** The status in words. */
  readonly words: string;
}

export function progressOf(status: string): Progress {
  const words = WORDS[status] ?? status;
  if (status === 'backlogged') return { value: 0.05, step: `Step 0 of ${STEPS.length}`, words };
  const i = (STEPS as readonly string[]).indexOf(status);
  if (i < 0) return { value: undefined, step: undefined, words };
  return { value: (i + 1) / STEPS.length, step: `Step ${i + 1} of ${STEPS.length}`, words };
}
