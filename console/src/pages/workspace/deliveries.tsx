import { useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../../../packages/client/src/index.js';
import { Empty, ErrorNote, Link, Loading } from '../../components/ui.js';
import { when } from '../../lib/format.js';
import { useSession } from '../../lib/session.js';

type Delivery = components['schemas']['WorkspaceWebhookDelivery'];

const PAGE = 20;

/** The workspace's recent webhook deliveries across jobs, newest first, a page at a time. */
export function Deliveries() {
  const { mg } = useSession();
  const [items, setItems] = useState<Delivery[]>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  // The read in flight: a new one (Older deliveries) or leaving the page aborts it, so no late
  // answer lands out of order or in a component that is gone.
  const ctl = useRef<AbortController | undefined>(undefined);
  const load = async (cursor?: string) => {
    ctl.current?.abort();
    const c = (ctl.current = new AbortController());
    setBusy(true);
    setError(undefined);
    try {
      const page = await mg.webhooks.deliveries({ limit: PAGE, ...(cursor ? { cursor } : {}), signal: c.signal });
      if (c.signal.aborted) return;
      setItems((old) => (cursor ? [...(old ?? []), ...page.items] : page.items));
      setNext(page.next_cursor);
    } catch (err) {
      if (!c.signal.aborted) setError(err);
    } finally {
      if (!c.signal.aborted) setBusy(false);
    }
  };
  useEffect(() => {
    void load();
    return () => ctl.current?.abort();
  }, [mg]);

  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Recent webhook deliveries</h2>
      <ErrorNote error={error} title="The deliveries could not be read" />
      {!items ? (
        error ? (
          <button type="button" disabled={busy} onClick={() => load()}>
            Try again
          </button>
        ) : (
          <Loading label="Reading deliveries…" />
        )
      ) : items.length === 0 ? (
        <Empty>No webhooks have been sent yet.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Recent webhook deliveries</caption>
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Event</th>
                  <th scope="col">URL</th>
                  <th scope="col">State</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Sent</th>
                </tr>
              </thead>
              <tbody>
                {items.map((d) => {
                  const last = d.attempts.at(-1);
                  return (
                    <tr key={d.webhook_id}>
                      <td>
                        <Link to={`jobs/${d.job_id}`}>{d.job_id.slice(0, 8)}</Link>
                      </td>
                      <td>{d.event}</td>
                      <td>
                        <code>{d.url}</code>
                      </td>
                      <td>
                        <span class={`badge badge-${d.state === 'delivered' ? 'ok' : d.state === 'pending' ? 'wait' : 'bad'}`}>{d.state}</span>
                      </td>
                      <td>
                        {d.attempts.length}
                        {last ? <span class="muted"> (last: {last.status ?? last.error ?? 'no answer'})</span> : null}
                      </td>
                      <td>{when(d.created_at)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {next ? (
            <p>
              <button type="button" disabled={busy} onClick={() => load(next)}>
                Older deliveries
              </button>
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}
