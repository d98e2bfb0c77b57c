import { useEffect, useState } from 'preact/hooks';
import { SpendChart } from '../components/spend-chart.js';
import { Empty, ErrorNote, Link, Loading, PageTitle } from '../components/ui.js';
import { formatMicros, usd } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import { spendOfSummaries, summaryRequests } from '../lib/spend.js';
import type { Spend } from '../lib/spend.js';
import { lastDays, usagePath, usageRange } from './usage/range.js';

const PRESETS = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
];

const PROBLEM_ID = 'usage-range-problem';

type Loaded = { spend: Spend };

/** Balance, then spend by day and by model over a chosen range, from GET /usage/summary. */
export function Usage(props: { query: URLSearchParams }) {
  const { mg, workspace, refreshWorkspace } = useSession();
  const range = usageRange(props.query, new Date());
  const { from, to } = range;
  const [data, setData] = useState<Loaded>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    void refreshWorkspace().catch(() => undefined);
  }, [refreshWorkspace]);

  useEffect(() => {
    setData(undefined);
    setError(undefined);
    // No range, no report: the page says why instead (below).
    if (!range.ok) return;
    const abort = new AbortController();
    (async () => {
      // Summed by the server, whatever the number of jobs: one request per stretch of days of one
      // UTC offset (usually one), so each job counts on its local day.
      const answers = await Promise.all(
        summaryRequests(from, to).map(async (request) => {
          const { day: _, ...query } = request;
          return { request, groups: (await mg.usageSummary({ ...query, signal: abort.signal })).groups };
        }),
      );
      if (!abort.signal.aborted) setData({ spend: spendOfSummaries(from, to, answers) });
    })().catch((err: unknown) => {
      if (!abort.signal.aborted) setError(err);
    });
    return () => abort.abort();
  }, [mg, from, to, range.ok]);

  // Whatever the fields hold goes into the URL, a range or not, so they keep showing it.
  const setRange = (f: string, t: string) => navigate(usagePath(f, t), { replace: true });
  const today = new Date();
  const preset = range.ok
    ? PRESETS.find((p) => {
        const r = lastDays(today, p.days);
        return r.from === from && r.to === to;
      })
    : undefined;
  const invalid = range.ok ? undefined : { 'aria-invalid': 'true' as const, 'aria-describedby': PROBLEM_ID };

  return (
    <>
      <PageTitle>Usage</PageTitle>
      <section class="stats" aria-label="API balance">
        <div class="stat">
          <div class="stat-label">Available</div>
          <div class="stat-value">{usd(workspace.available_usd)}</div>
        </div>
        <div class="stat">
          <div class="stat-label">Balance</div>
          <div class="stat-value">{usd(workspace.balance_usd)}</div>
        </div>
        <div class="stat">
          <div class="stat-label">Held for running jobs</div>
          <div class="stat-value">{usd(workspace.held_usd)}</div>
        </div>
      </section>

      <form class="toolbar" aria-label="Date range" onSubmit={(e) => e.preventDefault()}>
        <label>
          Range
          <select
            value={preset?.days ?? 'custom'}
            onChange={(e) => {
              const days = Number(e.currentTarget.value);
              if (days) {
                const r = lastDays(new Date(), days);
                setRange(r.from, r.to);
              }
            }}
          >
            {PRESETS.map((p) => (
              <option key={p.days} value={p.days}>
                {p.label}
              </option>
            ))}
            <option value="custom">Custom</option>
          </select>
        </label>
        <label>
          From
          <input type="date" value={from} max={to || undefined} {...invalid} onChange={(e) => setRange(e.currentTarget.value, to)} />
        </label>
        <label>
          To
          <input type="date" value={to} min={from || undefined} {...invalid} onChange={(e) => setRange(from, e.currentTarget.value)} />
        </label>
      </form>

      {range.ok ? null : (
        <div class="note note-warn" role="alert" id={PROBLEM_ID}>
          {range.problem}
        </div>
      )}
      <ErrorNote error={error} title="Usage could not be read" />
      {range.ok && !data && !error ? <Loading label="Reading usage…" /> : null}
      {data ? <Report {...data} /> : null}
    </>
  );
}

function Report({ spend }: Loaded) {
  if (spend.jobs === 0) {
    return (
      <Empty>
        No completed jobs were charged in this range. <Link to="playground">Run a model in the playground</Link>.
      </Empty>
    );
  }
  return (
    <>
      <p>
        <strong>{formatMicros(spend.totalMicros)}</strong> spent on <strong>{spend.jobs.toLocaleString('en-US')}</strong> {spend.jobs === 1 ? 'job' : 'jobs'} from {spend.days[0]} to{' '}
        {spend.days.at(-1)}.
      </p>
      <h2>Spend by day</h2>
      <SpendChart spend={spend} />
      <h2>Spend by model</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" class="num">
                Jobs
              </th>
              <th scope="col" class="num">
                Spend
              </th>
            </tr>
          </thead>
          <tbody>
            {spend.models.map((m) => (
              <tr key={m.model}>
                <td>
                  <code>{m.model}</code>
                </td>
                <td class="num">{m.jobs.toLocaleString('en-US')}</td>
                <td class="num">{formatMicros(m.micros)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <details>
        <summary>Spend by day as a table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Spend
                </th>
              </tr>
            </thead>
            <tbody>
              {spend.days.map((day, i) => (
                <tr key={day}>
                  <td>{day}</td>
                  <td class="num">{formatMicros(spend.models.reduce((sum, m) => sum + spend.byDay.get(m.model)![i]!, 0))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}
