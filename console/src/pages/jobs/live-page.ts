import { useEffect, useState } from 'preact/hooks';
import { isTerminal } from '../../../../packages/client/src/index.js';
import type { JobListQuery, JobPage } from '../../../../packages/client/src/index.js';
import { useSession } from '../../lib/session.js';
import { afterVisible } from '../../lib/visible-timer.js';

/** How often a page with a job still running is read again. */
export const POLL_MS = 2_000;
/** After a failed read: the next try, slower, so a server that is down is not hammered. */
const RETRY_MS = 6_000;

export interface LivePage {
  /** The page as last read; kept (with `error` set) when a later refresh fails. */
  readonly page: JobPage | undefined;
  readonly error: unknown;
  readonly loading: boolean;
}

/**
 * One page of GET /jobs, read again every couple of seconds while any job on it has not ended
 * (completed, failed or cancelled), so statuses change on screen as they change on the server.
 * One request per refresh for the whole page; none while the tab is hidden; none once every job on
 * the page has ended or the page is left. `key` names the query: a new key reads afresh.
 */
export function useLiveJobPage(query: (JobListQuery & { cursor?: string | undefined }) | undefined, key: string, reload: number): LivePage {
  const { mg } = useSession();
  const [state, setState] = useState<LivePage & { key: string }>({ key, page: undefined, error: undefined, loading: true });

  useEffect(() => {
    if (!query) {
      setState({ key, page: undefined, error: undefined, loading: false });
      return;
    }
    const ctl = new AbortController();
    let cancel: (() => void) | undefined;
    // Whether the page last read had a job still running: worth trying again after an error.
    let live = false;
    setState((s) => (s.key === key ? { ...s, loading: true } : { key, page: undefined, error: undefined, loading: true }));

    const schedule = (ms: number) => {
      cancel = afterVisible(ms, () => void read());
    };
    const read = async () => {
      try {
        const { cursor, ...rest } = query;
        const page = await mg.jobs.list({ ...rest, ...(cursor ? { cursor } : {}), signal: ctl.signal });
        if (ctl.signal.aborted) return;
        setState({ key, page, error: undefined, loading: false });
        live = page.items.some((j) => !isTerminal(j.status));
        if (live) schedule(POLL_MS);
      } catch (error) {
        if (ctl.signal.aborted) return;
        setState((s) => ({ key, page: s.key === key ? s.page : undefined, error, loading: false }));
        // Keep trying only when there was something live to follow.
        if (live) schedule(RETRY_MS);
      }
    };
    void read();
    return () => {
      ctl.abort();
      cancel?.();
    };
    // `key` stands for the query's contents, `reload` for a deliberate refresh.
  }, [key, reload, mg]);

  return state.key === key ? state : { page: undefined, error: undefined, loading: true };
}
