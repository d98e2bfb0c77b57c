import { useEffect, useRef, useState } from 'preact/hooks';
import type { Job } from '../../../packages/client/src/index.js';
import { Empty, ErrorNote, Link, Loading, PageTitle } from '../components/ui.js';
import { navigate } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import { GALLERY_KINDS, GalleryTile, isGalleryKind, tilesOf } from './gallery/tiles.js';

/** Completed jobs per page: a grid's worth. */
const PAGE_SIZE = 48;

/**
 * The outputs of completed jobs across jobs, newest first, as a grid of tiles, 48 jobs at a time
 * ("Load more"); optionally one kind (image, video, audio, 3D) by the outputs' file type.
 */
export function Gallery(props: { query: URLSearchParams }) {
  const { mg } = useSession();
  const kindParam = props.query.get('kind');
  const kind = isGalleryKind(kindParam) ? kindParam : undefined;
  const [jobs, setJobs] = useState<Job[]>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const ctl = useRef<AbortController | undefined>(undefined);

  const load = async (cursor?: string) => {
    ctl.current?.abort();
    const c = (ctl.current = new AbortController());
    setLoading(true);
    setError(undefined);
    try {
      const page = await mg.jobs.list({ status: 'completed', limit: PAGE_SIZE, ...(cursor ? { cursor } : {}), signal: c.signal });
      if (c.signal.aborted) return;
      setJobs((old) => (cursor ? [...(old ?? []), ...page.items] : page.items));
      setNext(page.next_cursor);
    } catch (err) {
      if (!c.signal.aborted) setError(err);
    } finally {
      if (!c.signal.aborted) setLoading(false);
    }
  };
  useEffect(() => {
    void load();
    return () => ctl.current?.abort();
  }, [mg]);

  const all = (jobs ?? []).flatMap(tilesOf);
  const tiles = kind ? all.filter((t) => t.kind === kind) : all;
  const kindLabel = GALLERY_KINDS.find((k) => k.kind === kind)?.label.toLowerCase();

  return (
    <>
      <PageTitle>Gallery</PageTitle>
      <form class="toolbar gallery-filters" aria-label="Filter the gallery" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span id="gallery-kind-label">Kind</span>
          <select
            aria-labelledby="gallery-kind-label"
            value={kind ?? ''} onChange={(e) => navigate(e.currentTarget.value ? `gallery?kind=${e.currentTarget.value}` : 'gallery', { replace: true })}>
            <option value="">All kinds</option>
            {GALLERY_KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNote error={error} title="The gallery could not be read" />
      {jobs === undefined ? (
        loading ? (
          <Loading label="Loading the gallery…" />
        ) : null
      ) : tiles.length === 0 ? (
        all.length === 0 && !next ? (
          <Empty>
            No completed jobs yet — try the <Link to="playground">playground</Link>.
          </Empty>
        ) : (
          <Empty>
            No {kindLabel ?? 'outputs'} among the {jobs.length} completed job{jobs.length === 1 ? '' : 's'} loaded
            {next ? ' so far: load more to look further back.' : '.'}
          </Empty>
        )
      ) : (
        <>
          <p class="muted" role="status">
            {tiles.length} output{tiles.length === 1 ? '' : 's'} from {jobs.length} completed job{jobs.length === 1 ? '' : 's'}
            {next ? ' (more below)' : ''}
          </p>
          <ul class="gallery" aria-label={kindLabel ? `Gallery: ${kindLabel}` : 'Gallery'}>
            {tiles.map((t) => (
              <GalleryTile key={t.url} tile={t} />
            ))}
          </ul>
        </>
      )}
      {next || (error && jobs === undefined) ? (
        <p class="gallery-more">
          <button type="button" disabled={loading} onClick={() => (next ? load(next) : load())}>
            {next ? (loading ? 'Loading…' : 'Load more') : 'Try again'}
          </button>
        </p>
      ) : null}
    </>
  );
}
