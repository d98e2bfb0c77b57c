import { useMemo, useState } from 'preact/hooks';
import type { Model } from '../../../../packages/client/src/index.js';

/**
 * The catalog as a list to choose from: searched by name (and description), filtered by kind.
 * Deprecated models carry their sunset date and replacement, retired ones (available: false) are
 * listed but marked.
 * Native radio buttons: arrow keys move through the list, each model's meta is its description.
 */

const KIND_NAMES: Record<string, string> = { image: 'Image', video: 'Video', audio: 'Audio', '3d': '3D', style: 'Style' };
export const kindName = (kind: string) => KIND_NAMES[kind] ?? kind;

/** Every word of the search in the model's id or description, case aside. */
export function matches(model: Pick<Model, 'id' | 'description'>, search: string): boolean {
  const text = `${model.id} ${model.description}`.toLowerCase();
  return search
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => text.includes(w));
}

export function ModelPicker(props: { models: readonly Model[]; selected: string | undefined; onSelect: (id: string) => void }) {
  const [search, setSearch] = useState('');
  const [kind, setKind] = useState('');
  const kinds = useMemo(() => [...new Set(props.models.map((m) => m.kind))], [props.models]);
  const shown = props.models.filter((m) => (kind === '' || m.kind === kind) && matches(m, search));
  return (
    <section class="card pg-picker" aria-labelledby="pg-models-title">
      <h2 id="pg-models-title">Model</h2>
      <div class="toolbar">
        <label>
          Search models
          <input type="search" value={search} placeholder="model-b-1, video…" autoComplete="off" onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            <option value="">All kinds</option>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {kindName(k)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted pg-count-line" role="status" aria-live="polite">
        {shown.length === props.models.length ? `${shown.length} models` : `${shown.length} of ${props.models.length} models`}
      </p>
      {shown.length === 0 ? (
        <p class="empty">No model matches. Clear the search or choose another kind.</p>
      ) : (
        <div class="pg-models" role="radiogroup" aria-labelledby="pg-models-title">
          {shown.map((m, i) => (
            <ModelOption key={m.id} model={m} index={i} checked={m.id === props.selected} onSelect={props.onSelect} />
          ))}
        </div>
      )}
    </section>
  );
}

function ModelOption(props: { model: Model; index: number; checked: boolean; onSelect: (id: string) => void }) {
  const { model: m } = props;
  const nameId = `pg-model-${props.index}-name`;
  const metaId = `pg-model-${props.index}-meta`;
  const dep = m.deprecation;
  return (
    <label class={`pg-model${props.checked ? ' pg-model-selected' : ''}${m.available ? '' : ' pg-model-retired'}`}>
      <input type="radio" name="pg-model" value={m.id} checked={props.checked} aria-labelledby={nameId} aria-describedby={metaId} onChange={() => props.onSelect(m.id)} />
      <span class="pg-model-text">
        <span class="pg-model-id" id={nameId}>
          {m.id}
        </span>
        <span class="pg-model-meta" id={metaId}>
          <span class="badge badge-muted">{kindName(m.kind)}</span>{' '}
          {!m.available ? (
            <span class="badge badge-bad">{dep ? `Retired ${dep.sunset_date}` : 'Retired'}</span>
          ) : dep ? (
            <span class="badge badge-wait">{`Deprecated: sunset ${dep.sunset_date}`}</span>
          ) : null}{' '}
          {/* The way off a deprecated or retired model, before it is chosen. */}
          {dep?.replacement ? <span class="pg-model-replacement">{`Replaced by ${dep.replacement}.`} </span> : null}
          <span class="muted">{m.description}</span>
        </span>
      </span>
    </label>
  );
}
