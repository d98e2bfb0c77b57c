import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { MediagenError, isTerminal } from '../../../../packages/client/src/index.js';
import { useSession } from '../../lib/session.js';
import { afterVisible } from '../../lib/visible-timer.js';
import { jobDeliveries, jobDetails } from './api.js';
import type { JobDetails, WebhookDelivery } from './api.js';
import { deliveryPollDelay } from './delivery-poll.js';

export interface JobState {
  readonly details: JobDetails | undefined;
  /** The job's webhook deliveries; undefined until read (or when they could not be). */
  readonly deliveries: WebhookDelivery[] | undefined;
  readonly deliveriesError: unknown;
  /** Reading the job failed: a 404 (unknown, deleted) or anything else. */
  readonly error: unknown;
  /** Following the job's changes failed (it is then shown as last read, with a note). */
  readonly liveError: unknown;
  readonly loading: boolean;
}

export const isNotFound = (err: unknown) => err instanceof MediagenError && err.status === 404;

/**
 * A job page's data: GET /jobs/{id}/details and its webhook deliveries, read again at each change
 * of the job while it runs (its event stream, `mg.jobs.watch`), and while a delivery is pending.
 * Reads are coalesced: a change during a read asks for one more read after it, never two at once.
 */
export function useJob(id: string): JobState & { refresh: () => void } {
  const { mg } = useSession();
  const [state, setState] = useState<JobState & { id: string }>({
    id,
    details: undefined,
    deliveries: undefined,
    deliveriesError: undefined,
    error: undefined,
    liveError: undefined,
    loading: true,
  });
  const refreshRef = useRef<() => void>(() => undefined);

  useEffect(() => {
    const ctl = new AbortController();
    const signal = ctl.signal;
    let reading = false;
    let again = false;
    setState({ id, details: undefined, deliveries: undefined, deliveriesError: undefined, error: undefined, liveError: undefined, loading: true });
    const read = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          let details: JobDetails;
          try {
            details = await jobDetails(mg, id, { signal });
          } catch (error) {
            if (signal.aborted) return;
            // A 404 (unknown or deleted) forgets the job; anything else keeps it as last read.
            setState((s) => ({ ...s, loading: false, error, details: isNotFound(error) ? undefined : s.details }));
            continue;
          }
          if (signal.aborted) return;
          setState((s) => ({ ...s, loading: false, error: undefined, details }));
          // Its webhook deliveries (GET /jobs/{id}/webhook-deliveries), once it has ended: a
          // delivery is written only then (jobs/api.ts).
          try {
            const deliveries = await jobDeliveries(mg, details.job, { signal });
            if (!signal.aborted) setState((s) => ({ ...s, deliveries, deliveriesError: undefined }));
          } catch (deliveriesError) {
            if (!signal.aborted) setState((s) => ({ ...s, deliveriesError }));
          }
        } while (again && !signal.aborted);
      } finally {
        reading = false;
      }
    };
    refreshRef.current = () => void read();
    void read();
    return () => {
      ctl.abort();
      refreshRef.current = () => undefined;
    };
  }, [id, mg]);

  const details = state.id === id ? state.details : undefined;
  const running = details !== undefined && !isTerminal(details.job.status);

  // Live: the job's event stream while it runs; every new status reads the details again.
  useEffect(() => {
    if (!running) return;
    const ctl = new AbortController();
    void (async () => {
      let last = '';
      try {
        for await (const job of mg.jobs.watch(id, { signal: ctl.signal })) {
          if (job.status !== last) {
            last = job.status;
            refreshRef.current();
          }
        }
        refreshRef.current();
      } catch (err) {
        if (ctl.signal.aborted) return;
        // Deleted meanwhile: the stream says so with a 404, as a read would.
        if (isNotFound(err)) setState((s) => ({ ...s, details: undefined, error: err }));
        else setState((s) => ({ ...s, liveError: err }));
      }
    })();
    return () => ctl.abort();
  }, [running, id, mg]);

  // A pending delivery: read again at its next attempt. Each read brings a new list, which sets
  // the next timer (also when the attempt is late and the time has not moved). None while the tab
  // is hidden: the timer that falls then waits for the tab to be shown again.
  const deliveries = state.deliveries;
  useEffect(() => {
    const delay = deliveries ? deliveryPollDelay(deliveries, Date.now()) : undefined;
    if (delay === undefined) return;
    return afterVisible(delay, () => refreshRef.current());
    // A failed read leaves the list as it was: its error sets the next timer instead.
  }, [deliveries, state.deliveriesError, state.error]);

  const refresh = useCallback(() => refreshRef.current(), []);
  if (state.id !== id) return { details: undefined, deliveries: undefined, deliveriesError: undefined, error: undefined, liveError: undefined, loading: true, refresh };
  return { ...state, refresh };
}
