import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { MediagenError } from '../../../packages/client/src/index.js';
import type { Job, Model, StyleTrainingRequest, components } from '../../../packages/client/src/index.js';
import { SchemaForm, controlId } from '../components/schema-form.js';
import { Empty, ErrorNote, Loading, PageTitle, errorText } from '../components/ui.js';
import { usd } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import { errorFieldPaths, topField } from './playground/field-errors.js';
import { ModelPicker, kindName } from './playground/model-picker.js';
import { RunPanel } from './playground/run.js';
import { bodyOf, looksValid } from './playground/body.js';
import { fieldsOf, initialValues } from './playground/schema.js';
import type { Value, Values } from './playground/schema.js';

/**
 * The playground: pick a model of GET /models, fill the form its request schema makes, see the
 * price (POST /models/{id}/quote) as the form changes, run it, and follow the job to its output.
 * The model is kept in the URL (`?model=<id>`), so a reload or a shared link opens the same one.
 */

type PriceQuote = components['schemas']['PriceQuote'];

/** The route of a model that does not create its jobs at /generate/{id}. */
const STYLE_TRAINING = '/styles/train';

const modelPath = (id: string) => `playground?model=${encodeURIComponent(id).replace(/%2F/gi, '/')}`;

export function Playground(props: { query: URLSearchParams }) {
  const { mg } = useSession();
  const [models, setModels] = useState<Model[]>();
  const [loadError, setLoadError] = useState<unknown>();
  const selectedId = props.query.get('model') ?? undefined;
  // The last job run here outlives a change of model: it goes on on the server, and its result
  // should not vanish because another model was looked at meanwhile.
  const [run, setRun] = useState<CreatedRun>();

  useEffect(() => {
    const ac = new AbortController();
    mg.models.list({ signal: ac.signal }).then(
      (list) => setModels(list),
      (err: unknown) => !ac.signal.aborted && setLoadError(err),
    );
    return () => ac.abort();
  }, [mg]);

  const select = useCallback((id: string) => navigate(modelPath(id), { replace: true }), []);
  const model = models?.find((m) => m.id === selectedId);

  return (
    <>
      <PageTitle>Playground</PageTitle>
      {loadError ? (
        <ErrorNote error={loadError} title="The models could not be loaded" />
      ) : !models ? (
        <Loading label="Loading the models…" />
      ) : (
        <>
          <ModelPicker models={models} selected={selectedId} onSelect={select} />
          {selectedId && !model ? (
            <div class="note note-warn" role="alert">
              There is no model <code>{selectedId}</code> in this server's catalog. Choose one above.
            </div>
          ) : null}
          {model ? <ModelRunner key={model.id} model={model} onSelect={select} run={run} onRun={setRun} /> : selectedId ? null : <Empty>Choose a model above to see its form.</Empty>}
        </>
      )}
    </>
  );
}

/** What the page tells about the price of the form as it stands. */
type QuoteState =
  | { readonly kind: 'waiting' }
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'quoted'; readonly quote: PriceQuote }
  | { readonly kind: 'failed'; readonly error: unknown };

/** A refusal of the API that is not about one field: shown above the submit button. */
interface General {
  readonly error: unknown;
}

interface CreatedRun {
  readonly model: string;
  readonly job: Job;
  readonly prompt: string | undefined;
}

const QUOTE_DEBOUNCE_MS = 400;
const FORM_ID = 'pg-form';

/** One model: what it is, its deprecation, its form and price, and the last job it ran. */
function ModelRunner(props: { model: Model; onSelect: (id: string) => void; run: CreatedRun | undefined; onRun: (run: CreatedRun) => void }) {
  const { mg, refreshWorkspace } = useSession();
  const { model } = props;
  const fields = useMemo(() => fieldsOf(model.request_schema), [model]);
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<General>();
  const [submitting, setSubmitting] = useState(false);
  const { run, onRun } = props;
  const [quote, setQuote] = useState<QuoteState>({ kind: 'waiting' });
  const generalRef = useRef<HTMLDivElement>(null);
  const resultRef = useRef<HTMLElement>(null);
  const runnable = model.available && (model.endpoint === undefined || model.endpoint === STYLE_TRAINING);

  const built = useMemo(() => bodyOf(fields, values), [fields, values]);
  const bodyKey = JSON.stringify(built.body);
  // Worth a quote: every value reads, every required field is there and within its bounds (else
  // the API's answer is a 400, which the submit shows beside its field).
  const readable = Object.keys(built.errors).length === 0 && looksValid(fields, built.body);

  // The price of the form as it stands, asked once the form has been still for a moment. The
  // price of the form as it was goes at once: shown during the wait, it would be taken for the
  // price of what Generate now sends.
  useEffect(() => {
    if (!runnable) return;
    if (!readable) return setQuote({ kind: 'incomplete' });
    setQuote({ kind: 'waiting' });
    const ac = new AbortController();
    const timer = setTimeout(() => {
      mg.models.quote(model.id, JSON.parse(bodyKey) as Record<string, unknown>, { signal: ac.signal }).then(
        // An answer for a form that has changed since is not this form's price.
        (q: PriceQuote) => !ac.signal.aborted && setQuote({ kind: 'quoted', quote: q }),
        (err: unknown) => {
          if (ac.signal.aborted) return;
          // A 400 names what the form lacks; the submit shows it beside its field if it is sent so.
          setQuote(err instanceof MediagenError && err.status === 400 ? { kind: 'incomplete' } : { kind: 'failed', error: err });
        },
      );
    }, QUOTE_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      ac.abort();
    };
  }, [mg, model.id, bodyKey, readable, runnable]);

  const change = useCallback((name: string, value: Value) => {
    setValues((v) => ({ ...v, [name]: value }));
    // The field's error goes once it is edited; the others stay until the next submit.
    setErrors((e) => {
      const kept = Object.entries(e).filter(([path]) => topField(path) !== name);
      return kept.length === Object.keys(e).length ? e : Object.fromEntries(kept);
    });
  }, []);

  const upload = useCallback(async (file: File) => (await mg.assets.upload(file, { filename: file.name })).image_url, [mg]);

  /** Focus the first field with an error, or the general alert: a keyboard or screen reader user lands on it. */
  const focusFirst = (paths: readonly string[]) => {
    requestAnimationFrame(() => {
      const first = fields.find((f) => paths.some((p) => topField(p) === f.name));
      const el = first ? document.getElementById(controlId(FORM_ID, paths.find((p) => topField(p) === first.name)!)) ?? document.getElementById(controlId(FORM_ID, first.name)) : generalRef.current;
      el?.focus();
    });
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (submitting || !runnable) return;
    const { body, errors: local } = bodyOf(fields, values);
    setGeneral(undefined);
    if (Object.keys(local).length > 0) {
      setErrors(local);
      focusFirst(Object.keys(local));
      return;
    }
    setErrors({});
    setSubmitting(true);
    try {
      const job = model.endpoint === STYLE_TRAINING ? await mg.styles.train(body as StyleTrainingRequest) : await mg.generate(model.id, body);
      onRun({ model: model.id, job, prompt: typeof body.prompt === 'string' ? body.prompt : undefined });
      // In one column the result is under the form: bring it into view.
      if (matchMedia('(max-width: 900px)').matches) requestAnimationFrame(() => resultRef.current?.scrollIntoView({ block: 'start' }));
      // The hold the job placed shows in the header's balance.
      void refreshWorkspace().catch(() => undefined);
    } catch (err) {
      const names = new Set(fields.map((f) => f.name));
      const paths = err instanceof MediagenError && err.status === 400 ? errorFieldPaths(err.error).filter((p) => names.has(topField(p))) : [];
      if (paths.length > 0) {
        setErrors(Object.fromEntries(paths.map((p) => [p, (err as MediagenError).error])));
        focusFirst(paths);
      } else {
        setGeneral({ error: err });
        focusFirst([]);
      }
    } finally {
      setSubmitting(false);
    }
  };

  const dep = model.deprecation;
  const replacement = dep?.replacement ?? undefined;
  return (
    <div class="grid-2 pg-main">
      <section class="card" aria-labelledby="pg-model-title">
        <h2 id="pg-model-title" class="pg-model-title">
          {model.id}
        </h2>
        <p class="pg-model-about">
          <span class="badge badge-muted">{kindName(model.kind)}</span> {model.description}
        </p>
        {model.price ? <p class="hint">Price: {model.price.description}</p> : null}
        {dep ? (
          <div class={`note ${model.available ? 'note-warn' : 'note-error'} pg-deprecation`}>
            <p>
              {model.available ? (
                <>
                  <strong>Deprecated.</strong> This model stops taking requests on <time dateTime={dep.sunset_date}>{dep.sunset_date}</time> (its sunset date).
                </>
              ) : (
                <>
                  <strong>Retired.</strong> This model stopped taking requests on <time dateTime={dep.sunset_date}>{dep.sunset_date}</time>: it is shown for
                  reference and cannot be run.
                </>
              )}{' '}
              {replacement ? (
                <>
                  Its replacement is <code>{replacement}</code>.
                </>
              ) : (
                'It has no replacement.'
              )}
            </p>
            <div class="actions">
              {replacement ? (
                <button type="button" onClick={() => props.onSelect(replacement)}>
                  Use {replacement} instead
                </button>
              ) : null}
              <a href={dep.migration_url} target="_blank" rel="noreferrer noopener">
                Migration notes
              </a>
            </div>
          </div>
        ) : !model.available ? (
          <div class="note note-error pg-deprecation">This model is retired: it is shown for reference and cannot be run.</div>
        ) : null}
        {model.endpoint !== undefined && model.endpoint !== STYLE_TRAINING ? (
          <div class="note note-info">
            This model takes its requests at <code>{model.endpoint}</code>, which the playground does not send to.
          </div>
        ) : null}
        {runnable ? (
          <form id={FORM_ID} class="pg-form" noValidate onSubmit={submit} aria-labelledby="pg-model-title">
            {fields.length === 0 ? <p class="muted">This model takes no fields.</p> : null}
            <SchemaForm fields={fields} values={values} onChange={change} errors={errors} upload={upload} idPrefix={FORM_ID} />
            <Price quote={quote} />
            <div ref={generalRef} tabIndex={-1} class="pg-general">
              {general ? <GeneralError error={general.error} onSelect={props.onSelect} /> : null}
            </div>
            <div class="actions">
              <button type="submit" class="primary" disabled={submitting}>
                {submitting ? 'Sending…' : model.endpoint === STYLE_TRAINING ? 'Start training' : 'Generate'}
              </button>
            </div>
          </form>
        ) : null}
      </section>
      <section class="card pg-result" aria-labelledby="pg-result-title" ref={resultRef}>
        <h2 id="pg-result-title">Result</h2>
        {run ? <RunPanel key={run.job.job_id} created={run.job} prompt={run.prompt} otherModel={run.model === model.id ? undefined : run.model} /> : <p class="muted">{runnable ? 'The job you run shows here, live, and its output when it is done.' : 'This model cannot be run.'}</p>}
      </section>
    </div>
  );
}

function Price(props: { quote: QuoteState }) {
  const q = props.quote;
  return (
    <p class="pg-price" role="status" aria-live="polite">
      {q.kind === 'quoted' ? (
        <>
          Estimated price: <strong>{`${q.quote.metered ? 'at most ' : ''}${usd(q.quote.price_usd)}`}</strong>
          {q.quote.metered ? <span class="muted"> (charged for what the job makes)</span> : null}
        </>
      ) : q.kind === 'incomplete' ? (
        <span class="muted">Complete the form to see the price.</span>
      ) : q.kind === 'failed' ? (
        <span class="muted">The price could not be estimated: {errorText(q.error)}</span>
      ) : (
        <span class="muted">Estimating the price…</span>
      )}
    </p>
  );
}

/** A refusal that names no field of the form: the balance, the limits, a retired model, a fault. */
function GeneralError(props: { error: unknown; onSelect: (id: string) => void }) {
  const err = props.error;
  const title =
    err instanceof MediagenError
      ? err.status === 402
        ? 'Not enough balance'
        : err.status === 429
          ? 'Too many requests'
          : err.status === 410
            ? 'This model is retired'
            : err.status === 400
              ? 'The request was refused'
              : `The request failed (HTTP ${err.status})`
      : 'The request failed';
  // The refusal in the API's words; a 402 or 429 may add advice in `message` (a 410's `error` is a code, its words the `message`).
  const words = err instanceof MediagenError && err.status !== 410 ? err.error : errorText(err);
  const advice = err instanceof MediagenError && err.status !== 410 && err.message !== err.error ? err.message : undefined;
  return (
    <div class="note note-error" role="alert">
      <strong>{title}: </strong>
      {words}
      {err instanceof MediagenError && err.retryAfter !== undefined ? <> Try again in {err.retryAfter} s.</> : null}
      {advice ? <p class="pg-advice">{advice}</p> : null}
      {err instanceof MediagenError && err.status === 410 && err.replacement ? (
        <div class="actions">
          <button type="button" onClick={() => props.onSelect(err.replacement!)}>
            Use {err.replacement} instead
          </button>
        </div>
      ) : null}
    </div>
  );
}

