import { useEffect, useState } from 'preact/hooks';
import { isTerminal } from '../../../packages/client/src/index.js';
import type { Model } from '../../../packages/client/src/index.js';
import { Empty, ErrorNote, Link, Loading, PageTitle, StatusBadge } from '../components/ui.js';
import { when } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import { JOB_STATUSES, filtersFrom, hasFilters, jobsPath, listQuery, rangeProblem } from './jobs/filters.js';
import type { JobFilters } from './jobs/filters.js';
import { useLiveJobPage } from './jobs/live-page.js';
import { catalogOf } from './jobs/models.js';

const PAGE_SIZE = 25;

/**
 * The jobs list: GET /jobs a page at a time, newest first, filtered by status, model and creation
 * day (the filters live in the URL), paged with a stack of cursors, its statuses kept live.
 */
export function Jobs(props: { query: URLSearchParams }) {
  const filters = filtersFrom(props.query);
  const filterKey = jobsPath(filters);
  // The cursors of the pages walked to, newest page first; back to the first page on new filters.
  const [paging, setPaging] = useState<{ key: string; cursors: string[] }>({ key: filterKey, cursors: [] });
  const cursors = paging.key === filterKey ? paging.cursors : [];
  const cursor = cursors.at(-1);
  const [reload, setReload] = useState(0);
  const problem = rangeProblem(filters);
  const query = problem ? undefined : { ...listQuery(filters), limit: PAGE_SIZE, cursor };
  const { page, error, loading } = useLiveJobPage(query, `${filterKey}#${cursor ?? ''}`, reload);

  const setFilters = (next: Partial<JobFilters>) => navigate(jobsPath({ ...filters, ...next }), { replace: true });
  const running = page?.items.filter((j) => !isTerminal(j.status)).length ?? 0;

  return (
    <>
      <PageTitle
        actions={
          <button type="button" onClick={() => setReload((n) => n + 1)} disabled={loading}>
            Refresh
          </button>
        }
      >
        Jobs
      </PageTitle>
      <FilterBar filters={filters} onChange={setFilters} />
      {problem ? (
        <div class="note note-warn" role="alert">
          {problem}
        </div>
      ) : null}
      <ErrorNote error={error} title="The jobs could not be read" />
      {page === undefined ? (
        loading ? (
          <Loading label="Loading jobs…" />
        ) : null
      ) : page.items.length === 0 ? (
        cursors.length > 0 ? (
          <Empty>No older jobs.</Empty>
        ) : hasFilters(filters) ? (
          <Empty>No jobs match these filters.</Empty>
        ) : (
          <Empty>
            No jobs yet — try the <Link to="playground">playground</Link>.
          </Empty>
        )
      ) : (
        <>
          <p class="muted jobs-live" role="status">
            {running > 0 ? `${running} job${running === 1 ? '' : 's'} still running on this page: statuses update live.` : ''}
          </p>
          <div class="table-wrap">
            <table class="jobs-table">
              <caption class="visually-hidden">Jobs, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Status</th>
                  <th scope="col">Model</th>
                  <th scope="col" class="job-time">
                    Created
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((job) => (
                  <tr key={job.job_id} data-job-id={job.job_id}>
                    <td>
                      <Link to={`jobs/${encodeURIComponent(job.job_id)}`} class="job-id" aria-label={`Job ${job.job_id}`}>
                        {job.job_id.slice(0, 8)}
                      </Link>
                    </td>
                    <td>
                      <StatusBadge status={job.status} />
                    </td>
                    <td class="job-model">
                      {job.type}
                      {/* On a phone the Created column folds in here (styles.css); one of the two is shown. */}
                      <time class="job-time-inline" dateTime={job.created_at}>
                        {when(job.created_at)}
                      </time>
                    </td>
                    <td class="job-time">
                      <time dateTime={job.created_at}>{when(job.created_at)}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {page && (cursors.length > 0 || page.next_cursor) ? (
        <nav class="pager actions" aria-label="Job pages">
          <button type="button" disabled={cursors.length === 0} onClick={() => setPaging({ key: filterKey, cursors: cursors.slice(0, -1) })}>
            Newer
          </button>
          <span class="muted">Page {cursors.length + 1}</span>
          <button
            type="button"
            disabled={!page.next_cursor}
            onClick={() => page.next_cursor && setPaging({ key: filterKey, cursors: [...cursors, page.next_cursor] })}
          >
            Older
          </button>
        </nav>
      ) : null}
    </>
  );
}

/** Status, model and day range: each change replaces the URL's query, which the list follows. */
function FilterBar(props: { filters: JobFilters; onChange: (f: Partial<JobFilters>) => void }) {
  const { mg } = useSession();
  const { filters, onChange } = props;
  const [models, setModels] = useState<Model[]>();
  useEffect(() => {
    let live = true;
    catalogOf(mg).then(
      (m) => live && setModels(m),
      // Without the catalog the list still works: the select offers the model already chosen.
      () => live && setModels([]),
    );
    return () => {
      live = false;
    };
  }, [mg]);
  const ids = [...new Set([...(models ?? []).map((m) => m.id), ...(filters.model ? [filters.model] : [])])].sort();
  const retired = new Set((models ?? []).filter((m) => !m.available).map((m) => m.id));

  return (
    <form class="toolbar jobs-filters" aria-label="Filter jobs" onSubmit={(e) => e.preventDefault()}>
      {/* Each control is named by its word alone (aria-labelledby), not by the label's whole text, which includes the value. */}
      <label>
        <span id="jobs-status-label">Status</span>
        <select
          aria-labelledby="jobs-status-label"
          value={filters.status ?? ''}
          onChange={(e) => onChange({ status: (e.currentTarget.value || undefined) as JobFilters['status'] })}
        >
          <option value="">Any status</option>
          {JOB_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span id="jobs-model-label">Model</span>
        <select aria-labelledby="jobs-model-label" value={filters.model ?? ''} onChange={(e) => onChange({ model: e.currentTarget.value || undefined })}>
          <option value="">Any model</option>
          {ids.map((id) => (
            <option key={id} value={id}>
              {retired.has(id) ? `${id} (retired)` : id}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span id="jobs-from-label">From</span>
        <input
          type="date"
          aria-labelledby="jobs-from-label"
          value={filters.from ?? ''}
          max={filters.to}
          onChange={(e) => onChange({ from: e.currentTarget.value || undefined })}
        />
      </label>
      <label>
        <span id="jobs-to-label">To</span>
        <input type="date" aria-labelledby="jobs-to-label" value={filters.to ?? ''} min={filters.from} onChange={(e) => onChange({ to: e.currentTarget.value || undefined })} />
      </label>
      {hasFilters(filters) ? (
        <button type="button" onClick={() => navigate('jobs', { replace: true })}>
          Clear filters
        </button>
      ) : null}
    </form>
  );
}
