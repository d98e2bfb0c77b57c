import { useEffect, useState } from 'preact/hooks';
import { isTerminal } from '../../../../packages/client/src/index.js';
import type { Job } from '../../../../packages/client/src/index.js';
import { JobOutputs, outputsOf, MediaView } from '../../components/media.js';
import { ErrorNote, Link, ProgressBar, StatusBadge } from '../../components/ui.js';
import { elapsed } from '../../lib/format.js';
import { useSession } from '../../lib/session.js';
import { progressOf } from './progress.js';

/**
 * A job the playground created, followed live: its event stream (the client falls back to polling),
 * a progress bar by step, a link to its page, and its outputs inline once it completes. The watch
 * stops when the panel goes (another job, another page); the job itself goes on on the server.
 */
export function RunPanel(props: { created: Job; prompt: string | undefined; otherModel?: string | undefined }) {
  const { mg, refreshWorkspace } = useSession();
  const [job, setJob] = useState<Job>(props.created);
  const [error, setError] = useState<unknown>();
  const id = props.created.job_id;

  useEffect(() => {
    const ac = new AbortController();
    (async () => {
      try {
        for await (const j of mg.jobs.watch(id, { signal: ac.signal })) setJob(j);
      } catch (err) {
        if (!ac.signal.aborted) setError(err);
      }
      // The balance in the header: the hold released, the charge made.
      if (!ac.signal.aborted) await refreshWorkspace().catch(() => undefined);
    })();
    return () => ac.abort();
  }, [mg, id, refreshWorkspace]);

  const progress = progressOf(job.status);
  const ended = isTerminal(job.status);
  const preview = job.status === 'intermediate-complete' ? outputsOf(job).find((o) => o.kind === 'image') : undefined;
  const alt = props.prompt ? `Output of ${job.type}: ${props.prompt}` : `Output of ${job.type}`;
  return (
    <div class="pg-run">
      <div class="pg-run-head">
        <StatusBadge status={job.status} />
        <Link to={`jobs/${encodeURIComponent(id)}`}>
          Job {id.slice(0, 8)}
          <span class="visually-hidden"> (its page)</span>
        </Link>
        {job.completed_at ? <span class="muted">{elapsed(job.created_at, job.completed_at)}</span> : null}
      </div>
      {props.otherModel !== undefined ? (
        <p class="muted pg-run-model">
          Run with <code>{props.otherModel}</code>, the model chosen before.
        </p>
      ) : null}
      {progress.value !== undefined ? (
        <>
          <ProgressBar value={progress.value} label={`Job progress: ${job.status}`} />
          <p class="muted pg-step" role="status" aria-live="polite">
            {progress.step}: {job.status} — {progress.words}
          </p>
        </>
      ) : null}
      {props.prompt !== undefined ? (
        <p class="pg-prompt">
          <span class="muted">Prompt: </span>
          <span class="pg-prompt-text">{props.prompt}</span>
        </p>
      ) : null}
      {job.status === 'failed' ? (
        <div class="note note-error" role="alert">
          <strong>The job failed</strong>
          {job.error ? (
            <>
              {' '}
              with <code>{job.error.code}</code>: {job.error.message}
            </>
          ) : null}
        </div>
      ) : null}
      {job.status === 'cancelled' ? <div class="note note-info">The job was cancelled.</div> : null}
      {preview ? (
        <figure class="pg-preview">
          <MediaView output={preview} alt={`Preview: ${alt}`} />
          <figcaption class="muted">Preview</figcaption>
        </figure>
      ) : null}
      {job.status === 'completed' ? <JobOutputs job={job} alt={alt} /> : null}
      {job.status === 'completed' && job.result?.style_id ? (
        <p>
          The style is trained: <code>{String(job.result.style_id)}</code>
        </p>
      ) : null}
      {error && !ended ? <ErrorNote error={error} title="Following the job stopped" /> : null}
    </div>
  );
}
