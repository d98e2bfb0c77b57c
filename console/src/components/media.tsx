import { useEffect, useState } from 'preact/hooks';
import type { Job } from '../../../src/client/index.js';
import { ErrorNote } from './ui.js';

/**
 * A job's outputs as media: images, videos (poster frame, playing on hover in the gallery), audio
 * players and 3D models in model-viewer, loaded only when a 3D model is on screen. Every URL comes
 * from the API's own `result`; the page's Content-Security-Policy admits no other origin.
 */

export type MediaKind = 'image' | 'video' | 'audio' | 'model' | 'file';

export interface Output {
  readonly url: string;
  readonly kind: MediaKind;
  /** The file's name, for a download link. */
  readonly name: string;
}

const KINDS: ReadonlyArray<[RegExp, MediaKind]> = [
  [/\.(png|jpe?g|webp|gif)$/i, 'image'],
  [/\.(mp4|webm|mov)$/i, 'video'],
  [/\.(wav|mp3|ogg|flac)$/i, 'audio'],
  [/\.(glb|gltf)$/i, 'model'],
];

export function outputOf(url: string): Output {
  const path = (() => {
    try {
      return new URL(url).pathname;
    } catch {
      return url;
    }
  })();
  const name = decodeURIComponent(path.split('/').pop() ?? 'output');
  return { url, name, kind: KINDS.find(([re]) => re.test(path))?.[1] ?? 'file' };
}

/** Every output of a job, main output first; a 3D job's preview image comes with its model. */
export function outputsOf(job: Pick<Job, 'result'>): Output[] {
  const urls: unknown = job.result?.urls;
  const items: unknown[] = Array.isArray(urls) ? urls : urls && typeof urls === 'object' ? Object.values(urls) : [];
  return items.flatMap((u) => {
    const url = typeof u === 'string' ? u : u && typeof u === 'object' ? (u as { url?: unknown }).url : undefined;
    return typeof url === 'string' && /^https?:\/\//i.test(url) ? [outputOf(url)] : [];
  });
}

let viewer: Promise<unknown> | undefined;
/** model-viewer registers its custom element on import: once, on the first 3D model shown. */
const loadViewer = () => (viewer ??= import('@google/model-viewer'));

export function ModelViewer(props: { src: string; poster?: string | undefined; alt: string }) {
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let live = true;
    loadViewer().then(
      () => live && setReady(true),
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, []);
  if (error) return <ErrorNote error={error} title="The 3D viewer could not load" />;
  if (!ready) return props.poster ? <img src={props.poster} alt={props.alt} loading="lazy" /> : <p class="muted">Loading the 3D viewer…</p>;
  return <model-viewer class="model-viewer" src={props.src} poster={props.poster} alt={props.alt} camera-controls auto-rotate shadow-intensity="1" />;
}

/** One output, full size: the job page and the playground. */
export function MediaView(props: { output: Output; poster?: string | undefined; alt: string }) {
  const { output } = props;
  switch (output.kind) {
    case 'image':
      return <img class="media" src={output.url} alt={props.alt} />;
    case 'video':
      return <video class="media" src={output.url} controls playsInline preload="metadata" aria-label={props.alt} />;
    case 'audio':
      return <audio class="media-audio" src={output.url} controls preload="metadata" aria-label={props.alt} />;
    case 'model':
      return <ModelViewer src={output.url} poster={props.poster} alt={props.alt} />;
    default:
      return (
        <a href={output.url} download={output.name}>
          {output.name}
        </a>
      );
  }
}

/** A job's outputs, each with its download link; a 3D model shown with its preview as poster. */
export function JobOutputs(props: { job: Job; alt: string }) {
  const outputs = outputsOf(props.job);
  const preview = outputs.find((o) => o.kind === 'image')?.url;
  const hasModel = outputs.some((o) => o.kind === 'model');
  const shown = hasModel ? outputs.filter((o) => o.kind !== 'image') : outputs;
  return (
    <div class="outputs">
      {shown.map((o) => (
        <figure key={o.url}>
          <MediaView output={o} poster={hasModel ? preview : undefined} alt={props.alt} />
          <figcaption>
            <a href={o.url} download={o.name}>
              Download {o.name}
            </a>
          </figcaption>
        </figure>
      ))}
      {hasModel && preview ? (
        <p>
          <a href={preview} download>
            Download the preview image
          </a>
        </p>
      ) : null}
    </div>
  );
}
