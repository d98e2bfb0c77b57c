import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Field, MediaAccept } from '../pages/playground/schema.js';
import { errorText } from './ui.js';

/**
 * The parts the schema form (schema-form.tsx) builds its controls from: labels with their required
 * mark, hints, errors, fieldsets, and the number, text and upload inputs.
 */

export const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, '-');
export const ids = (...parts: Array<string | false | undefined>) => parts.filter(Boolean).join(' ') || undefined;

/** The id of a field's control (its first one): the page focuses it to show an error. */
export const controlId = (prefix: string, path: string) => `${prefix}-${slug(path)}`;

export interface Ctx {
  readonly prefix: string;
  readonly errors: Readonly<Record<string, string>>;
  readonly upload: (file: File) => Promise<string>;
}

const ACCEPT: Record<MediaAccept, string | undefined> = { image: 'image/*', video: 'video/*', audio: 'audio/*', any: undefined };

export function Required(props: { required: boolean }) {
  return props.required ? (
    <span class="pg-required" aria-hidden="true">
      {' '}
      *
    </span>
  ) : null;
}

/**
 * A control's visible label, its required mark beside it rather than in it: the label's text (and
 * so the control's name, by getByLabel too) is the field's name alone; `required` says the rest.
 */
export function Label(props: { for: string; id?: string; required: boolean; children: ComponentChildren }) {
  return (
    <div class="pg-label">
      <label for={props.for} id={props.id}>
        {props.children}
      </label>
      <Required required={props.required} />
    </div>
  );
}

/** A schema's description: its `code` spans (between backticks) as code, the rest as text. */
export function Hint(props: { id: string; text: string | undefined }) {
  if (!props.text) return null;
  const parts = props.text.split(/`([^`]+)`/);
  return (
    <p class="hint" id={props.id}>
      {parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}
    </p>
  );
}

/** The errors of a field and of its parts, one line each. */
export function FieldError(props: { id: string; messages: readonly string[] }) {
  if (props.messages.length === 0) return null;
  return (
    <p class="field-error" id={props.id}>
      {props.messages.map((m, i) => (
        <span key={i} class="pg-error-line">
          {m}
        </span>
      ))}
    </p>
  );
}

/** A field of several controls: a fieldset whose legend is its label. */
export function Group(props: { id: string; field: Field; hint: ComponentChildren; error: ComponentChildren; invalid: boolean; children: ComponentChildren }) {
  const { field, id } = props;
  return (
    <fieldset class="pg-group" id={id} aria-describedby={ids(field.description && `${id}-hint`, props.invalid && `${id}-error`)} aria-invalid={props.invalid ? 'true' : undefined}>
      <legend>
        {field.label}
        <Required required={field.required} />
      </legend>
      {props.hint}
      {props.children}
      {props.error}
    </fieldset>
  );
}

export type Common = { id: string; 'aria-describedby': string | undefined; 'aria-invalid': 'true' | undefined };

/**
 * A number field; with a minimum and a maximum, a range slider beside it on the same value. The
 * number field takes any number (the form does not validate), so the API says what it refuses.
 */
export function NumberInput(props: { field: Extract<Field, { kind: 'number' }>; value: string; onChange: (v: string) => void; common: Common; labelId: string }) {
  const { field } = props;
  const input = (
    <input
      type="number"
      {...props.common}
      inputMode={field.integer ? 'numeric' : 'decimal'}
      required={field.required}
      min={field.min}
      max={field.max}
      step={field.integer ? 1 : 'any'}
      value={props.value}
      onInput={(e) => props.onChange(e.currentTarget.value)}
    />
  );
  if (!field.slider) return input;
  const n = Number(props.value);
  const min = field.min!;
  const max = field.max!;
  const set = props.value.trim() !== '' && Number.isFinite(n);
  // Unset (no value, no default): the thumb rests in the middle, faded, until the field has a value.
  const at = set ? Math.min(max, Math.max(min, n)) : typeof field.default === 'number' ? field.default : (min + max) / 2;
  return (
    <div class="range-row">
      <input
        type="range"
        class={set ? undefined : 'pg-unset'}
        id={`${props.common.id}-range`}
        aria-labelledby={props.labelId}
        aria-describedby={props.common['aria-describedby']}
        aria-invalid={props.common['aria-invalid']}
        min={min}
        max={max}
        step={field.step}
        value={at}
        onInput={(e) => props.onChange(e.currentTarget.value)}
      />
      {input}
    </div>
  );
}

export function TextInput(props: { field: Extract<Field, { kind: 'string' }>; value: string; onChange: (v: string) => void; common: Common }) {
  const { field } = props;
  if (field.multiline) {
    return <textarea {...props.common} required={field.required} maxLength={field.maxLength} rows={4} value={props.value} onInput={(e) => props.onChange(e.currentTarget.value)} />;
  }
  const shared = {
    ...props.common,
    required: field.required,
    maxLength: field.maxLength,
    autoComplete: 'off',
    value: props.value,
    onInput: (e: { currentTarget: HTMLInputElement }) => props.onChange(e.currentTarget.value),
  };
  if (field.media) return <input type="url" {...shared} inputMode="url" placeholder="https://… or upload a file" spellcheck={false} />;
  return <input type="text" {...shared} />;
}

/** A file upload beside a URL field: the file goes to POST /assets, its URL into the field. */
export function Upload(props: { label: string; accept: MediaAccept; id: string; ctx: Ctx; onUploaded: (url: string) => void }) {
  const [state, setState] = useState<{ busy: boolean; error?: unknown; name?: string }>({ busy: false });
  const statusId = `${props.id}-status`;
  const choose = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    setState({ busy: true, name: file.name });
    try {
      const url = await props.ctx.upload(file);
      props.onUploaded(url);
      setState({ busy: false, name: file.name });
    } catch (err) {
      setState({ busy: false, error: err, name: file.name });
    } finally {
      // The same file can be chosen again.
      input.value = '';
    }
  };
  return (
    <div class="pg-upload">
      <label for={props.id}>
        Upload a file<span class="visually-hidden"> for {props.label}</span>
      </label>
      <input type="file" class="pg-file" id={props.id} accept={ACCEPT[props.accept]} disabled={state.busy} aria-describedby={statusId} onChange={(e) => void choose(e.currentTarget)} />
      <span id={statusId} class={state.error ? 'pg-upload-status field-error' : 'pg-upload-status muted'} role="status" aria-live="polite">
        {state.busy ? `Uploading ${state.name ?? ''}…` : state.error ? `The upload failed: ${errorText(state.error)}` : state.name ? `Uploaded ${state.name}` : ''}
      </span>
    </div>
  );
}
