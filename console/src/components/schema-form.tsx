import type { ComponentChildren } from 'preact';
import { initialValues } from '../pages/playground/schema.js';
import type { EnumValue, Field, ScalarField, Value, Values } from '../pages/playground/schema.js';
import { topField } from '../pages/playground/field-errors.js';
import { FieldError, Group, Hint, Label, NumberInput, Required, TextInput, Upload, controlId, ids } from './schema-fields.js';
import type { Ctx } from './schema-fields.js';

export { controlId } from './schema-fields.js';

/**
 * The fields of a request JSON Schema as form controls (pages/playground/schema.ts reads the
 * schema). Every control has a visible label; a field's hint and its error are tied to it by
 * aria-describedby, and an error sets aria-invalid. Values are text only: nothing renders HTML.
 */

export interface SchemaFormProps {
  readonly fields: readonly Field[];
  readonly values: Values;
  readonly onChange: (name: string, value: Value) => void;
  /** Errors by field path (`width`, `styles[0].strength`): shown beside their top-level field. */
  readonly errors: Readonly<Record<string, string>>;
  /** Uploads a file and answers its URL, for the media URL fields. */
  readonly upload: (file: File) => Promise<string>;
  /** Prefix of the controls' ids: unique on the page. */
  readonly idPrefix: string;
}

export function SchemaForm(props: SchemaFormProps) {
  const ctx: Ctx = { prefix: props.idPrefix, errors: props.errors, upload: props.upload };
  const required = props.fields.some((f) => f.required);
  return (
    <div class="pg-fields">
      {required ? (
        <p class="hint pg-legend">
          Fields marked <span aria-hidden="true">*</span>
          <span class="visually-hidden">with an asterisk</span> are required.
        </p>
      ) : null}
      {props.fields.map((f) => (
        <TopField key={f.name} field={f} value={props.values[f.name]} onChange={(v) => props.onChange(f.name, v)} ctx={ctx} />
      ))}
    </div>
  );
}

/** One top-level field: its control, its hint, and every error naming it or a part of it. */
function TopField(props: { field: Field; value: Value; onChange: (v: Value) => void; ctx: Ctx }) {
  const { field, ctx } = props;
  const messages = [...new Set(Object.entries(ctx.errors).flatMap(([path, m]) => (topField(path) === field.name ? [m] : [])))];
  return (
    <div class={`field pg-field-${field.kind}`}>
      <Control field={field} path={field.name} value={props.value} onChange={props.onChange} ctx={ctx} top messages={messages} />
    </div>
  );
}

interface ControlProps {
  readonly field: Field;
  /** The field's path in the body: `width`, `styles[0].strength`. */
  readonly path: string;
  readonly value: Value;
  readonly onChange: (v: Value) => void;
  readonly ctx: Ctx;
  /** A top-level field, which shows the errors: a part's error is shown by its field. */
  readonly top: boolean;
  /** For a part: what it is part of ("Style 1"), said before its label to screen readers, so each name is unique. */
  readonly context?: string | undefined;
  /** The errors shown under this control: a top-level field's, its parts' included. */
  readonly messages: readonly string[];
}

function Control(props: ControlProps) {
  const { field, path, ctx } = props;
  const id = controlId(ctx.prefix, path);
  const hintId = `${id}-hint`;
  // A part of a field points at its field's error line.
  const errorId = `${controlId(ctx.prefix, topField(path))}-error`;
  // A top-level field is invalid when an error names it or a part of it; a part, when one names the part.
  const invalid = props.top ? props.messages.length > 0 : ctx.errors[path] !== undefined;
  const described = ids(field.description && hintId, invalid && errorId);
  const common = { id, 'aria-describedby': described, 'aria-invalid': invalid ? ('true' as const) : undefined };
  const hint = <Hint id={hintId} text={field.description} />;
  const error = <FieldError id={`${id}-error`} messages={props.messages} />;
  const context = props.context ? <span class="visually-hidden">{`${props.context} `}</span> : null;
  const label = (
    <Label for={id} id={`${id}-label`} required={field.required}>
      {context}
      {field.label}
    </Label>
  );

  switch (field.kind) {
    case 'enum': {
      const index = field.options.findIndex((o) => o === props.value);
      // An empty choice where no value is a choice: nothing chosen yet, an optional field without a
      // default, or null allowed. An optional field with a default shows the default instead.
      const blank = index < 0 || field.nullable || (!field.required && field.default === undefined);
      const blankText = field.required ? 'Choose…' : 'Not set';
      return (
        <>
          {label}
          <select
            {...common}
            required={field.required}
            value={index < 0 ? '' : String(index)}
            onChange={(e) => {
              const v = e.currentTarget.value;
              props.onChange(v === '' ? undefined : field.options[Number(v)]);
            }}
          >
            {blank ? <option value="">{blankText}</option> : null}
            {field.options.map((o, i) => (
              <option key={i} value={String(i)}>
                {String(o)}
              </option>
            ))}
          </select>
          {hint}
          {error}
        </>
      );
    }
    case 'number':
      return (
        <>
          {label}
          <NumberInput field={field} value={typeof props.value === 'string' ? props.value : ''} onChange={props.onChange} common={common} labelId={`${id}-label`} />
          {hint}
          {error}
        </>
      );
    case 'boolean':
      return (
        <>
          <div class="pg-label">
            <label class="check" for={id}>
              <input type="checkbox" {...common} checked={props.value === true} onChange={(e) => props.onChange(e.currentTarget.checked)} />
              <span>
                {context}
                {field.label}
              </span>
            </label>
            <Required required={field.required} />
          </div>
          {hint}
          {error}
        </>
      );
    case 'string':
      return (
        <>
          {label}
          <TextInput field={field} value={typeof props.value === 'string' ? props.value : ''} onChange={props.onChange} common={common} />
          {field.media ? <Upload label={props.context ? `${props.context} ${field.label}` : field.label} accept={field.media} id={`${id}-upload`} ctx={ctx} onUploaded={props.onChange} /> : null}
          {hint}
          {error}
        </>
      );
    case 'json':
      return (
        <>
          <Label for={id} required={field.required}>
            {context}
            {field.label} <span class="muted">(JSON)</span>
          </Label>
          <textarea
            {...common}
            class="pg-json"
            spellcheck={false}
            placeholder={field.shape === 'array' ? '[{"key": "value"}]' : field.shape === 'object' ? '{"key": "value"}' : ''}
            value={typeof props.value === 'string' ? props.value : ''}
            onInput={(e) => props.onChange(e.currentTarget.value)}
          />
          {hint}
          {error}
        </>
      );
    case 'multi': {
      const chosen = (Array.isArray(props.value) ? props.value : []) as readonly EnumValue[];
      return (
        <Group id={id} field={field} hint={hint} error={error} invalid={invalid}>
          <div class="pg-checks">
            {field.options.map((o, i) => (
              <label class="check" key={i} for={`${id}-${i}`}>
                <input
                  type="checkbox"
                  id={`${id}-${i}`}
                  aria-invalid={invalid ? 'true' : undefined}
                  checked={chosen.includes(o)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    // In the schema's order, whatever order they were ticked in.
                    props.onChange(field.options.filter((x) => (x === o ? on : chosen.includes(x))));
                  }}
                />
                <span>{String(o)}</span>
              </label>
            ))}
          </div>
        </Group>
      );
    }
    case 'list':
      return <ListRows field={field} id={id} path={path} value={props.value} onChange={props.onChange} ctx={ctx} hint={hint} error={error} invalid={invalid} />;
    case 'rows':
      return <ObjectRows field={field} id={id} path={path} value={props.value} onChange={props.onChange} ctx={ctx} hint={hint} error={error} invalid={invalid} />;
    case 'group': {
      const values = (props.value ?? {}) as Values;
      return (
        <Group id={id} field={field} hint={hint} error={error} invalid={invalid}>
          {field.fields.map((f) => (
            <div class="field" key={f.name}>
              <Control field={f} path={`${path}.${f.name}`} value={values[f.name]} onChange={(v) => props.onChange({ ...values, [f.name]: v })} ctx={ctx} top={false} context={field.label} messages={[]} />
            </div>
          ))}
        </Group>
      );
    }
  }
}

const singular = (label: string) => (/URLs$/.test(label) ? label.slice(0, -1) : /[^s]s$/.test(label) ? label.slice(0, -1) : label);

/** A list of strings or numbers (image URLs, say): a row each, added and removed. */
function ListRows(props: { field: Extract<Field, { kind: 'list' }>; id: string; path: string; value: Value; onChange: (v: Value) => void; ctx: Ctx; hint: ComponentChildren; error: ComponentChildren; invalid: boolean }) {
  const { field, id, ctx } = props;
  const rows = (Array.isArray(props.value) ? props.value : []) as readonly string[];
  const one = singular(field.label);
  const set = (i: number, v: string) => props.onChange(rows.map((r, j) => (j === i ? v : r)));
  const full = field.maxItems !== undefined && rows.length >= field.maxItems;
  return (
    <Group id={id} field={field} hint={props.hint} error={props.error} invalid={props.invalid}>
      {rows.length === 0 ? <p class="muted pg-none">None yet.</p> : null}
      {rows.map((r, i) => {
        const rowPath = `${props.path}[${i}]`;
        const rowId = controlId(ctx.prefix, rowPath);
        const item: ScalarField = { ...field.item, label: `${one} ${i + 1}` };
        const bad = ctx.errors[rowPath] !== undefined;
        return (
          <div class="pg-row" key={i}>
            <label for={rowId}>{item.label}</label>
            <div class="pg-row-line">
              {item.kind === 'number' ? (
                <input type="number" id={rowId} step="any" aria-invalid={bad ? 'true' : undefined} aria-describedby={bad ? `${id}-error` : undefined} value={r} onInput={(e) => set(i, e.currentTarget.value)} />
              ) : (
                <TextInput field={item} value={r} onChange={(v) => set(i, v)} common={{ id: rowId, 'aria-describedby': bad ? `${id}-error` : undefined, 'aria-invalid': bad ? 'true' : undefined }} />
              )}
              <button type="button" onClick={() => props.onChange(rows.filter((_, j) => j !== i))}>
                Remove<span class="visually-hidden"> {item.label}</span>
              </button>
            </div>
            {item.kind === 'string' && item.media ? <Upload label={item.label} accept={item.media} id={`${rowId}-upload`} ctx={ctx} onUploaded={(url) => set(i, url)} /> : null}
          </div>
        );
      })}
      <button type="button" disabled={full} onClick={() => props.onChange([...rows, ''])}>
        Add {one.toLowerCase().startsWith('url') ? one : one.charAt(0).toLowerCase() + one.slice(1)}
      </button>
      {field.maxItems !== undefined ? <span class="muted pg-count"> {`${rows.length} of at most ${field.maxItems}`}</span> : null}
    </Group>
  );
}

/** A list of objects (styles with their strength, say): a small set of fields per row. */
function ObjectRows(props: { field: Extract<Field, { kind: 'rows' }>; id: string; path: string; value: Value; onChange: (v: Value) => void; ctx: Ctx; hint: ComponentChildren; error: ComponentChildren; invalid: boolean }) {
  const { field, id, ctx } = props;
  const rows = (Array.isArray(props.value) ? props.value : []) as readonly Values[];
  const one = singular(field.label);
  const full = field.maxItems !== undefined && rows.length >= field.maxItems;
  return (
    <Group id={id} field={field} hint={props.hint} error={props.error} invalid={props.invalid}>
      {rows.length === 0 ? <p class="muted pg-none">None yet.</p> : null}
      {rows.map((row, i) => (
        <fieldset class="pg-subgroup" key={i}>
          <legend>{`${one} ${i + 1}`}</legend>
          {field.fields.map((f) => (
            <div class="field" key={f.name}>
              <Control
                field={f}
                path={`${props.path}[${i}].${f.name}`}
                value={row[f.name]}
                onChange={(v) => props.onChange(rows.map((r, j) => (j === i ? { ...r, [f.name]: v } : r)))}
                ctx={ctx}
                top={false}
                context={`${one} ${i + 1}`}
                messages={[]}
              />
            </div>
          ))}
          <button type="button" onClick={() => props.onChange(rows.filter((_, j) => j !== i))}>
            Remove<span class="visually-hidden">{` ${one} ${i + 1}`}</span>
          </button>
        </fieldset>
      ))}
      <button type="button" disabled={full} onClick={() => props.onChange([...rows, initialValues(field.fields)])}>
        Add {one.charAt(0).toLowerCase() + one.slice(1)}
      </button>
      {field.maxItems !== undefined ? <span class="muted pg-count"> {`${rows.length} of at most ${field.maxItems}`}</span> : null}
    </Group>
  );
}
