import { useState } from 'preact/hooks';
import { isTerminal } from '../../../packages/client/src/index.js';
import { ConfirmButton } from '../components/confirm.js';
import { JobOutputs, outputsOf } from '../components/media.js';
import { Empty, ErrorNote, Link, errorText, Loading, PageTitle, ProgressBar, StatusBadge } from '../components/ui.js';
import { clock, elapsed, usd, when } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import type { JobDetails } from './jobs/api.js';
import { isNotFound, useJob } from './jobs/use-job.js';
import { WebhookDeliveries } from './jobs/webhooks.js';

/**
 * One job: its status (live while it runs), request, status history, outputs, cost, error and
 * webhook deliveries, with Cancel (while it runs) and Delete, both asked first.
 */
export function JobPage(props: { id: string }) {
  const { mg } = useSession();
  const { id } = props;
  const job = useJob(id);
  const [actionError, setActionError] = useState<unknown>();

  if (!job.details) {
    if (isNotFound(job.error)) {
      return (
        <>
          <PageTitle>Job not found</PageTitle>
          <ErrorNote error={job.error} />
          <Empty>
            It may have been deleted. <Link to="jobs">Back to the jobs</Link>.
          </Empty>
        </>
      );
    }
    return (
      <>
        <PageTitle>Job</PageTitle>
        {job.error ? (
          <>
            <ErrorNote error={job.error} title="The job could not be read" />
            <button type="button" onClick={job.refresh}>
              Try again
            </button>
          </>
        ) : (
          <Loading label="Loading the job…" />
        )}
      </>
    );
  }

  const details = job.details;
  const j = details.job;
  const ended = isTerminal(j.status);

  const cancel = async () => {
    setActionError(undefined);
    try {
      await mg.jobs.cancel(id);
    } catch (err) {
      // Most likely it ended meanwhile (409 job_ended): the API's words say how.
      setActionError(err);
    }
    job.refresh();
  };
  const remove = async () => {
    setActionError(undefined);
    try {
      await mg.jobs.delete(id);
    } catch (err) {
      setActionError(err);
      return;
    }
    navigate('jobs');
  };

  return (
    <>
      <PageTitle
        actions={
          <>
            {!ended ? (
              <ConfirmButton label="Cancel job" question="Cancel this job? It stops now and is not billed; its record stays." confirmLabel="Cancel job" onConfirm={cancel} />
            ) : null}
            <ConfirmButton
              label="Delete job"
              question="Delete this job and its output files? A running job is cancelled first. This cannot be undone."
              confirmLabel="Delete"
              danger
              onConfirm={remove}
            />
          </>
        }
      >
        Job <span class="job-heading-id">{j.job_id.slice(0, 8)}</span>
      </PageTitle>
      <p class="job-summary" role="status">
        <StatusBadge status={j.status} /> <span class="job-model">{j.type}</span>
      </p>
      {!ended ? <ProgressBar label={`Job ${j.status}`} /> : null}
      <ErrorNote error={actionError} />
      <ErrorNote error={job.error} title="The job could not be read again" />
      {job.liveError ? (
        <div class="note note-warn" role="status">
          Live updates stopped: {errorText(job.liveError)}{' '}
          <button type="button" class="link-button" onClick={job.refresh}>
            Read the job again
          </button>
        </div>
      ) : null}
      {j.status === 'failed' && j.error ? (
        <section class="note note-error" aria-labelledby="job-error-title">
          <strong id="job-error-title">Failed: </strong>
          <code>{j.error.code}</code> — {j.error.message}
        </section>
      ) : null}

      <div class="grid-2">
        <section class="card" aria-labelledby="job-facts-title">
          <h2 id="job-facts-title">Details</h2>
          <Facts details={details} />
        </section>
        <section class="card" aria-labelledby="job-timeline-title">
          <h2 id="job-timeline-title">Timeline</h2>
          <Timeline timeline={details.timeline} />
        </section>
      </div>

      <section aria-labelledby="job-outputs-title">
        <h2 id="job-outputs-title">Outputs</h2>
        {outputsOf(j).length > 0 ? (
          <JobOutputs job={j} alt={altOf(details)} />
        ) : (
          <p class="muted">{ended ? (j.status === 'completed' ? 'This job has no output files.' : `No outputs: the job ${j.status === 'failed' ? 'failed' : 'was cancelled'}.`) : 'The outputs appear here when the job completes.'}</p>
        )}
      </section>

      <section aria-labelledby="job-request-title">
        <h2 id="job-request-title">Request</h2>
        {details.request === null ? (
          <p class="muted">Not kept (zero data retention).</p>
        ) : (
          <pre class="request-json">
            {JSON.stringify(details.request, null, 2)}
          </pre>
        )}
      </section>

      <section aria-labelledby="job-webhook-title">
        <h2 id="job-webhook-title">Webhook</h2>
        <WebhookDeliveries deliveries={job.deliveries} error={job.deliveriesError} ended={ended} />
      </section>
    </>
  );
}

/** The cost as the ledger has it: charged, held while running, or not billed. */
export function costText(d: Pick<JobDetails, 'billing' | 'price_usd' | 'cost_usd'>): string {
  switch (d.billing) {
    case 'charged':
      return `${usd(d.cost_usd)} charged`;
    case 'held':
      return `held ${usd(d.price_usd)}`;
    case 'released':
      return d.price_usd ? `not billed (the hold of ${usd(d.price_usd)} was released)` : 'not billed';
    default:
      return 'not billed';
  }
}

function Facts(props: { details: JobDetails }) {
  const { job: j, request_id } = props.details;
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={j.status} />
      </dd>
      <dt>Model</dt>
      <dd>{j.type}</dd>
      <dt>Job ID</dt>
      <dd>
        <code>{j.job_id}</code>
      </dd>
      <dt>Created</dt>
      <dd>
        <time dateTime={j.created_at}>{when(j.created_at)}</time>
      </dd>
      <dt>Completed</dt>
      <dd>
        {j.completed_at ? (
          <>
            <time dateTime={j.completed_at}>{when(j.completed_at)}</time>
            <span class="muted"> (after {elapsed(j.created_at, j.completed_at)})</span>
          </>
        ) : (
          '—'
        )}
      </dd>
      <dt>Cost</dt>
      <dd class="job-cost">{costText(props.details)}</dd>
      <dt>Request ID</dt>
      <dd>{request_id ? <code>{request_id}</code> : '—'}</dd>
    </dl>
  );
}

function Timeline(props: { timeline: JobDetails['timeline'] }) {
  const first = props.timeline[0]?.at;
  if (!first) return <p class="muted">No status changes recorded.</p>;
  return (
    <ol class="timeline">
      {props.timeline.map((t, i) => (
        <li key={`${t.status}-${t.at}`}>
          <StatusBadge status={t.status} />{' '}
          <time dateTime={t.at} title={when(t.at)}>
            {i === 0 ? when(t.at) : clock(t.at)}
          </time>
          {i > 0 ? <span class="muted"> +{elapsed(first, t.at)}</span> : null}
        </li>
      ))}
    </ol>
  );
}

/** Media's text alternative: the prompt when the request kept one (as text: an attribute, never HTML). */
function altOf(d: JobDetails): string {
  const prompt = d.request?.['prompt'];
  return typeof prompt === 'string' && prompt.trim() ? prompt.trim() : `Output of ${d.job.type}`;
}
