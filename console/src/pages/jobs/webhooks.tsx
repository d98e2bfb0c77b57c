import { ErrorNote, Loading } from '../../components/ui.js';
import { when } from '../../lib/format.js';
import type { WebhookDelivery } from './api.js';

const STATE_TONE: Record<string, string> = { delivered: 'ok', pending: 'wait' };

/** What happened to a job's webhook: each delivery (there is one per job sent with X-Webhook-URL) and its attempts. */
export function WebhookDeliveries(props: { deliveries: WebhookDelivery[] | undefined; error: unknown; ended: boolean }) {
  const { deliveries, error } = props;
  if (deliveries === undefined) return error ? <ErrorNote error={error} title="The webhook deliveries could not be read" /> : <Loading label="Reading webhook deliveries…" />;
  if (deliveries.length === 0) {
    return (
      <p class="muted">
        {props.ended ? 'No webhook was requested.' : 'No webhook delivery yet: a webhook, when one was requested, is sent once the job ends.'}
      </p>
    );
  }
  return (
    <>
      <ErrorNote error={error} title="The webhook deliveries could not be read again" />
      {deliveries.map((d) => (
        <div class="delivery" key={d.webhook_id}>
          <dl class="facts">
            <dt>URL</dt>
            <dd>
              <code>{d.url}</code>
            </dd>
            <dt>Event</dt>
            <dd>{d.event}</dd>
            <dt>State</dt>
            <dd>
              <span class={`badge badge-${STATE_TONE[d.state] ?? 'bad'}`}>{d.state}</span>
              {d.state === 'pending' && d.next_attempt_at ? <span class="muted"> next attempt {when(d.next_attempt_at)}</span> : null}
            </dd>
          </dl>
          {d.attempts.length === 0 ? (
            <p class="muted">Not attempted yet.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Attempts to deliver the webhook to {d.url}</caption>
                <thead>
                  <tr>
                    <th scope="col">Attempt</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Answer</th>
                    <th scope="col" class="num">
                      Took
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={a.attempt}>
                      <td>{a.attempt}</td>
                      <td>
                        <time dateTime={a.attempted_at}>{when(a.attempted_at)}</time>
                      </td>
                      <td>{answerOf(a)}</td>
                      <td class="num">{a.duration_ms} ms</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      ))}
    </>
  );
}

function answerOf(a: WebhookDelivery['attempts'][number]): string {
  const status = a.status !== null ? `HTTP ${a.status}` : undefined;
  if (status && a.error) return `${status} (${a.error})`;
  return status ?? a.error ?? 'no answer';
}
