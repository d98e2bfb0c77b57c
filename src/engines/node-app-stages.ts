import type { EngineContext, EngineStage, OutputFile } from './engine.js';

const RANK: Readonly<Record<EngineStage, number>> = { processing: 1, sampling: 2, 'intermediate-complete': 3 };
const ORDER: readonly EngineStage[] = ['processing', 'sampling', 'intermediate-complete'];

/**
 * A node-app job's one status, fed by steps that each report their own stages: it only ever moves
 * forward, each stage at most once, and one report at a time (the runner's stage writes are not
 * re-entrant). A stage reached past one not yet reported reports that one first, so
 * `intermediate-complete` always follows `sampling`, as the state machine requires.
 */
export class StageForwarder {
  readonly #ctx: Pick<EngineContext, 'stage'>;
  #reached = 0;
  #queue: Promise<void> = Promise.resolve();

  constructor(ctx: Pick<EngineContext, 'stage'>) {
    this.#ctx = ctx;
  }

  /**
   * Reports `stage` (and any stage before it not yet reported), unless it was reached already.
   * Rejects as the runner's `stage` does, when the job can no longer advance.
   */
  reach(stage: EngineStage, preview?: OutputFile): Promise<void> {
    const next = this.#queue.then(async () => {
      for (const s of ORDER.slice(this.#reached, RANK[stage])) {
        await this.#ctx.stage(s, s === stage ? preview : undefined);
        this.#reached = RANK[s];
      }
    });
    // A refused report rejects its caller; the reports queued behind it are tried (and refused) in turn.
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
