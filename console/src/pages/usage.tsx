import { useEffect, useState } from 'preact/hooks';
import { SpendChart } from '../components/spend-chart.js';
import { Empty, ErrorNote, Link, Loading, PageTitle } from '../components/ui.js';
import { localDay, usd } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import { formatMicros, summarize, windowOf } from '../lib/spend.js';
import type { Spend, UsageRow } from '../lib/spend.js';

/** Pages of GET /usage read for one range at most: 50 000 jobs. A larger range is narrowed first. */
const MAX_PAGES = 50;
const PAGE = 1000;

const PRESETS = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
];

function daysAgo(n: number): string {
  const d = new Date();
  d.setDate(d.getDate() - n);
  return localDay(d);
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The range in the URL (`from`, `to`: local days), else the last 30 days. */
function rangeOf(query: URLSearchParams): { from: string; to: string } {
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  return DAY_RE.test(from) && DAY_RE.test(to) && from <= to ? { from, to } : { from: daysAgo(29), to: localDay(new Date()) };
}

type Loaded = { spend: Spend; truncated: boolean };

/** Balance, then spend by day and by model over a chosen range, from GET /usage. */
export function Usage(props: { query: URLSearchParams }) {
  const { mg, workspace, refreshWorkspace } = useSession();
  const { from, to } = rangeOf(props.query);
  const [data, setData] = useState<Loaded>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    void refreshWorkspace().catch(() => undefined);
  }, [refreshWorkspace]);

  useEffect(() => {
    const abort = new AbortController();
    setData(undefined);
    setError(undefined);
    (async () => {
      const rows: UsageRow[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await mg.usage({ ...windowOf(from, to), limit: PAGE, ...(cursor ? { cursor } : {}), signal: abort.signal });
        rows.push(...page.items);
        cursor = page.next_cursor ?? undefined;
        pages += 1;
      } while (cursor && pages < MAX_PAGES);
      if (!abort.signal.aborted) setData({ spend: summarize(rows, from, to), truncated: cursor !== undefined });
    })().catch((err: unknown) => {
      if (!abort.signal.aborted) setError(err);
    });
    return () => abort.abort();
  }, [mg, from, to]);

  const setRange = (f: string, t: string) => {
    if (DAY_RE.test(f) && DAY_RE.test(t) && f <= t) navigate(`usage?from=${f}&to=${t}`, { replace: true });
  };

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
            value={PRESETS.find((p) => from === daysAgo(p.days - 1) && to === localDay(new Date()))?.days ?? 'custom'}
            onChange={(e) => {
              const days = Number(e.currentTarget.value);
              if (days) setRange(daysAgo(days - 1), localDay(new Date()));
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
          <input type="date" value={from} max={to} onChange={(e) => setRange(e.currentTarget.value, to)} />
        </label>
        <label>
          To
          <input type="date" value={to} min={from} onChange={(e) => setRange(from, e.currentTarget.value)} />
        </label>
      </form>

      <ErrorNote error={error} title="Usage could not be read" />
      {!data && !error ? <Loading label="Reading usage…" /> : null}
      {data ? <Report {...data} /> : null}
    </>
  );
}

function Report({ spend, truncated }: Loaded) {
  if (spend.jobs === 0) {
    return (
      <Empty>
        No completed jobs were charged in this range. <Link to="playground">Run a model in the playground</Link>.
      </Empty>
    );
  }
  return (
    <>
      {truncated ? (
        <p class="note note-warn" role="status">
          This range has more than {(MAX_PAGES * PAGE).toLocaleString()} charged jobs; only the newest are counted. Choose a shorter range for exact totals.
        </p>
      ) : null}
      <p>
        <strong>{formatMicros(spend.totalMicros)}</strong> spent on <strong>{spend.jobs}</strong> {spend.jobs === 1 ? 'job' : 'jobs'} from {spend.days[0]} to{' '}
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
                <td class="num">{m.jobs}</td>
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
