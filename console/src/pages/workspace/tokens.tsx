import { useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../../../packages/client/src/index.js';
import { ConfirmButton } from '../../components/confirm.js';
import { Empty, ErrorNote, Loading } from '../../components/ui.js';
import { when } from '../../lib/format.js';
import { useSession } from '../../lib/session.js';

type ApiToken = components['schemas']['ApiToken'];
type ApiTokenLimits = Omit<components['schemas']['ApiTokenRequest'], 'name'>;

/** The workspace's API tokens: list, create (the secret shown this once) and revoke. */
export function Tokens() {
  const { mg } = useSession();
  const [tokens, setTokens] = useState<ApiToken[]>();
  const [error, setError] = useState<unknown>();
  const [name, setName] = useState('');
  const [limits, setLimits] = useState<LimitFields>(NO_LIMITS);
  const [created, setCreated] = useState<{ name: string; secret: string }>();
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  // The reads of this section, aborted when it goes (the page is left): no late answer lands then.
  const reads = useRef<AbortController | undefined>(undefined);
  const load = () => {
    const signal = reads.current?.signal;
    return mg.tokens.list(signal ? { signal } : {}).then(
      (list) => !signal?.aborted && setTokens(list),
      (err: unknown) => !signal?.aborted && setError(err),
    );
  };
  useEffect(() => {
    const ctl = (reads.current = new AbortController());
    void load();
    return () => ctl.abort();
  }, [mg]);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const made = await mg.tokens.create(name.trim(), { limits: limitsOf(limits) });
      setCreated({ name: made.token.name, secret: made.secret });
      setName('');
      setLimits(NO_LIMITS);
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (token: ApiToken) => {
    setError(undefined);
    try {
      await mg.tokens.revoke(token.id);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title" ref={heading} tabIndex={-1}>
        API tokens
      </h2>
      <ErrorNote error={error} />
      <form class="toolbar" onSubmit={create}>
        <label>
          New token name
          <input value={name} maxLength={200} required onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. deploy bot" />
        </label>
        <details class="token-limits">
          <summary>Limits of its own (optional)</summary>
          <label>
            Spend limit (USD)
            <input inputMode="decimal" pattern={'\\d{1,12}(\\.\\d{1,6})?'} value={limits.spend} onInput={(e) => setLimits({ ...limits, spend: e.currentTarget.value })} placeholder="e.g. 25.00" />
          </label>
          <label>
            Spend period
            <select value={limits.period} onChange={(e) => setLimits({ ...limits, period: e.currentTarget.value as LimitFields['period'] })}>
              <option value="total">all time</option>
              <option value="month">UTC month</option>
              <option value="day">UTC day</option>
            </select>
          </label>
          <label>
            Models (patterns, comma-separated)
            <input value={limits.models} onInput={(e) => setLimits({ ...limits, models: e.currentTarget.value })} placeholder="e.g. image/*" />
          </label>
          <label>
            Jobs in flight at most
            <input type="number" min={1} value={limits.jobs} onInput={(e) => setLimits({ ...limits, jobs: e.currentTarget.value })} />
          </label>
        </details>
        <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
          Create token
        </button>
      </form>
      {created ? (
        <NewSecret
          name={created.name}
          secret={created.secret}
          onDone={() => {
            setCreated(undefined);
            // Done goes with the secret: the section's heading keeps the focus in place.
            heading.current?.focus();
          }}
        />
      ) : null}
      {!tokens ? (
        error ? null : <Loading label="Reading tokens…" />
      ) : tokens.length === 0 ? (
        <Empty>No API tokens.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">API tokens of the workspace</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created by</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Limits</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id}>
                  <td>
                    {t.name}
                    {t.current ? <span class="muted"> (this session)</span> : null}
                  </td>
                  <td>{t.created_by}</td>
                  <td>{when(t.created_at)}</td>
                  <td>{when(t.last_used_at)}</td>
                  <td>{limitsText(t)}</td>
                  <td>{t.revoked_at ? <span class="badge badge-muted">revoked {when(t.revoked_at)}</span> : <span class="badge badge-ok">active</span>}</td>
                  <td>
                    {t.revoked_at ? null : (
                      <ConfirmButton
                        label={`Revoke ${t.name}`}
                        question={
                          t.current
                            ? `Revoke “${t.name}”? It is the token this console is signed in with: you will be signed out.`
                            : `Revoke “${t.name}”? Requests with it are refused from now on.`
                        }
                        confirmLabel="Revoke"
                        danger
                        onConfirm={() => revoke(t)}
                      >
                        Revoke
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface LimitFields {
  spend: string;
  period: 'total' | 'month' | 'day';
  models: string;
  jobs: string;
}
const NO_LIMITS: LimitFields = { spend: '', period: 'total', models: '', jobs: '' };

/** The form's limit fields as POST /tokens takes them; blank fields set no limit (the server checks the rest). */
function limitsOf(f: LimitFields): ApiTokenLimits {
  const models = f.models.split(',').map((m) => m.trim()).filter((m) => m !== '');
  return {
    ...(f.spend.trim() !== '' ? { spend_limit_usd: f.spend.trim(), spend_period: f.period } : {}),
    ...(models.length > 0 ? { models } : {}),
    ...(f.jobs.trim() !== '' ? { max_concurrent_jobs: Number(f.jobs) } : {}),
  };
}

const PER = { total: 'in all', month: 'a month', day: 'a day' } as const;

/** "$1.20 of $25.00 a month · image/* · 1 of 2 jobs", or "none". */
function limitsText(t: ApiToken): string {
  const l = t.limits;
  if (!l) return 'none';
  const parts: string[] = [];
  if (l.spend_limit_usd !== null) parts.push(`${t.spend ? `${usd(t.spend.spent_usd)} of ` : ''}${usd(l.spend_limit_usd)} ${PER[l.spend_period ?? 'total']}`);
  if (l.models !== null) parts.push(l.models.join(', '));
  if (l.max_concurrent_jobs !== null) parts.push(`${t.spend ? `${t.spend.jobs_in_flight} of ` : ''}${l.max_concurrent_jobs} jobs`);
  return parts.join(' · ');
}

/** "25.000000" as "$25.00": cents unless a smaller part is there. */
const usd = (text: string) => `$${text.replace(/(\.\d\d\d*?)0+$/, '$1')}`;

/** A new token's secret, shown once: copy it now, it cannot be read again. */
function NewSecret(props: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div class="card new-secret" role="status" aria-live="polite">
      <p>
        <strong>Token “{props.name}” created.</strong> Copy it now: it is shown only this once.
      </p>
      {/* A visible name for the secret: aria-label on a plain element is not reliably announced. */}
      <p class="secret-label" id="new-token-secret-label">
        New token secret
      </p>
      <output class="secret" aria-labelledby="new-token-secret-label">
        {props.secret}
      </output>
      <div class="actions">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy token'}
        </button>
        <button type="button" onClick={props.onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
