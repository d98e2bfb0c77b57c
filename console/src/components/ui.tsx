import type { ComponentChildren } from 'preact';
import { MediagenError } from '../../../packages/client/src/index.js';
import { followLink, href } from '../lib/router.js';

/** Small shared pieces: links, notices, status badges, progress. Text only: nothing renders HTML. */

export function Link(props: { to: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' | undefined; 'aria-label'?: string }) {
  const { to, children, ...rest } = props;
  return (
    <a {...rest} href={href(to)} onClick={followLink}>
      {children}
    </a>
  );
}

/** What an error says to a person: the API's own words for its answers, a plain line otherwise. */
export function errorText(err: unknown): string {
  if (err instanceof MediagenError) return err.message || err.error;
  if (err instanceof Error && err.name === 'MediagenNetworkError') return 'The server could not be reached. Check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}

export function ErrorNote(props: { error: unknown; title?: string }) {
  if (props.error === undefined || props.error === null) return null;
  return (
    <div class="note note-error" role="alert">
      {props.title ? <strong>{props.title}: </strong> : null}
      {errorText(props.error)}
    </div>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      {props.label ?? 'Loading…'}
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <div class="empty">{props.children}</div>;
}

const STATUS_TONE: Record<string, string> = {
  completed: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  queued: 'wait',
  backlogged: 'wait',
};

export function StatusBadge(props: { status: string }) {
  return <span class={`badge badge-${STATUS_TONE[props.status] ?? 'run'}`}>{props.status}</span>;
}

/** A job's progress: determinate when a fraction is known, else the step it is at. */
export function ProgressBar(props: { value?: number | undefined; label: string }) {
  const pct = props.value === undefined ? undefined : Math.round(Math.min(1, Math.max(0, props.value)) * 100);
  return (
    <div
      class={`progress ${pct === undefined ? 'progress-indeterminate' : ''}`}
      role="progressbar"
      aria-label={props.label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct}
    >
      <div class="progress-fill" style={pct === undefined ? undefined : { width: `${pct}%` }} />
    </div>
  );
}

export function PageTitle(props: { children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <div class="page-title">
      <h1>{props.children}</h1>
      {props.actions ? <div class="actions">{props.actions}</div> : null}
    </div>
  );
}
