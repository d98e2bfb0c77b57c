import { useRef, useState } from 'preact/hooks';
import type { Job } from '../../../../packages/client/src/index.js';
import { ModelViewer, outputsOf } from '../../components/media.js';
import type { Output } from '../../components/media.js';
import { Link } from '../../components/ui.js';
import { shortModel, when } from '../../lib/format.js';

/** What a gallery tile shows, known from the output's file type. */
export type GalleryKind = 'image' | 'video' | 'audio' | '3d';

export const GALLERY_KINDS: ReadonlyArray<{ kind: GalleryKind; label: string }> = [
  { kind: 'image', label: 'Images' },
  { kind: 'video', label: 'Videos' },
  { kind: 'audio', label: 'Audio' },
  { kind: '3d', label: '3D models' },
];

export const isGalleryKind = (s: string | null): s is GalleryKind => GALLERY_KINDS.some((k) => k.kind === s);

export interface Tile {
  readonly job: Job;
  readonly kind: GalleryKind;
  readonly url: string;
  /** A 3D model's preview image, from the same result. */
  readonly poster?: string | undefined;
  /** The host of a file stored outside this service: not loaded here (the CSP refuses it), linked instead. */
  readonly elsewhere?: string | undefined;
}

const KIND_OF: Partial<Record<Output['kind'], GalleryKind>> = { image: 'image', video: 'video', audio: 'audio', model: '3d' };

/**
 * A completed job's tiles: one per image, video or audio output, one for a 3D model (its preview
 * image as the poster). Other files (none today) have no tile; the job page lists them. A file
 * stored outside this service gets a tile that links to it rather than loading it.
 */
export function tilesOf(job: Job): Tile[] {
  const outputs = outputsOf(job);
  const model = outputs.find((o) => o.kind === 'model' && o.local);
  if (model) return [{ job, kind: '3d', url: model.url, poster: outputs.find((o) => o.kind === 'image' && o.local)?.url }];
  return outputs.flatMap((o) => {
    const kind = KIND_OF[o.kind];
    if (!kind) return [];
    return [o.local ? { job, kind, url: o.url } : { job, kind, url: o.url, elsewhere: o.host }];
  });
}

const NOUN: Record<GalleryKind, string> = { image: 'Image', video: 'Video', audio: 'Audio', '3d': '3D model' };

/** One tile: the media, then a link to its job. */
export function GalleryTile(props: { tile: Tile }) {
  const { tile } = props;
  const { job } = tile;
  const captionId = `tile-${job.job_id}-${tile.url.split('/').pop() ?? ''}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const label = `${NOUN[tile.kind]} from ${job.type}, ${when(job.created_at)}`;
  return (
    <li class={`tile tile-${tile.kind}`} data-kind={tile.kind} data-job-id={job.job_id}>
      {tile.elsewhere !== undefined ? (
        <div class="thumb thumb-elsewhere">
          <a href={tile.url} target="_blank" rel="noopener noreferrer" aria-describedby={captionId}>
            Open the {NOUN[tile.kind].toLowerCase()}
          </a>
          <span class="muted">stored elsewhere, at {tile.elsewhere}</span>
        </div>
      ) : tile.kind === 'image' ? (
        <img class="thumb" src={tile.url} alt={label} loading="lazy" decoding="async" />
      ) : tile.kind === 'video' ? (
        <HoverVideo url={tile.url} label={label} />
      ) : tile.kind === 'audio' ? (
        <div class="thumb thumb-audio" aria-hidden="true">
          <span>♪</span>
        </div>
      ) : (
        <Model3d url={tile.url} poster={tile.poster} label={label} describedBy={captionId} />
      )}
      <div class="tile-body" id={captionId}>
        {tile.kind === 'audio' && tile.elsewhere === undefined ? <audio src={tile.url} controls preload="none" aria-label={label} /> : null}
        <Link to={`jobs/${encodeURIComponent(job.job_id)}`}>
          {shortModel(job.type)}
          <span class="visually-hidden">: the job of this {NOUN[tile.kind].toLowerCase()}</span>
        </Link>
        <div class="muted">
          <time dateTime={job.created_at}>{when(job.created_at)}</time>
        </div>
      </div>
    </li>
  );
}

/**
 * A video as its first frame (`#t=0.1`, metadata only until played), playing muted while the
 * pointer is over it or it has the keyboard focus, paused when either leaves.
 */
function HoverVideo(props: { url: string; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  const play = () => {
    // A play() cut short by pause() rejects; that is expected here, not an error.
    ref.current?.play().catch(() => undefined);
  };
  const pause = () => ref.current?.pause();
  return (
    <video
      ref={ref}
      class="thumb"
      src={`${props.url}#t=0.1`}
      preload="metadata"
      muted
      playsInline
      loop
      tabIndex={0}
      aria-label={`${props.label} (plays while hovered or focused)`}
      onMouseEnter={play}
      onMouseLeave={pause}
      onFocus={play}
      onBlur={pause}
    />
  );
}

/** A 3D model's preview picture until asked for the model: only then does the 3D viewer (a large chunk) load. */
function Model3d(props: { url: string; poster: string | undefined; label: string; describedBy: string }) {
  const [open, setOpen] = useState(false);
  if (open) {
    return (
      <div class="thumb thumb-3d">
        <ModelViewer src={props.url} poster={props.poster} alt={props.label} />
      </div>
    );
  }
  return (
    <div class="thumb thumb-3d">
      {props.poster ? <img src={props.poster} alt={props.label} loading="lazy" decoding="async" /> : <span class="muted">3D model</span>}
      <button type="button" class="view-3d" aria-describedby={props.describedBy} onClick={() => setOpen(true)}>
        View in 3D
      </button>
    </div>
  );
}
