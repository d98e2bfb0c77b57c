import { useEffect, useState } from 'preact/hooks';
import type { Job } from '../../../packages/client/src/index.js';
import { ErrorNote } from './ui.js';

/**
 * A job's outputs as media: images, videos (poster frame, playing on hover in the gallery), audio
 * players and 3D models in model-viewer, loaded only when a 3D model is on screen. Only the
 * service's own files (this page's origin) load as media: a result may name a file stored
 * elsewhere (a node app's output, say), which the page's Content-Security-Policy would refuse to
 * load (and log as an error), so such a file is a link to open or download instead.
 */

export type MediaKind = 'image' | 'video' | 'audio' | 'model' | 'file';

export interface Output {
  readonly url: string;
  readonly kind: MediaKind;
  /** The file's name, for a download link. */
  readonly name: string;
  /** Whether it is the service's own file (this page's origin), so it may load as media here. */
  readonly local: boolean;
  /** Where a file stored elsewhere is (its host), to say so beside its link. */
  readonly host: string;
}

const KINDS: ReadonlyArray<[RegExp, MediaKind]> = [
  [/\.(png|jpe?g|webp|gif)$/i, 'image'],
  [/\.(mp4|webm|mov)$/i, 'video'],
  [/\.(wav|mp3|ogg|flac)$/i, 'audio'],
  [/\.(glb|gltf)$/i, 'model'],
];

/** A URL's last path segment, decoded when it decodes: a malformed escape ("%E0%A4%A") stays as written rather than throwing. */
function fileName(path: string): string {
  const last = path.split('/').pop() || 'output';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** One output URL: its kind by file type, its name, and whether it is this service's own. `origin` is the page's. */
export function outputOf(url: string, origin: string | undefined = globalThis.location?.origin): Output {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const path = parsed?.pathname ?? url;
  const local = parsed !== undefined && origin !== undefined && parsed.origin === origin;
  return { url, name: fileName(path), kind: KINDS.find(([re]) => re.test(path))?.[1] ?? 'file', local, host: parsed?.host ?? '' };
}

/** Every output of a job, main output first; a 3D job's preview image comes with its model. */
export function outputsOf(job: Pick<Job, 'result'>, origin: string | undefined = globalThis.location?.origin): Output[] {
  const urls: unknown = job.result?.urls;
  const items: unknown[] = Array.isArray(urls) ? urls : urls && typeof urls === 'object' ? Object.values(urls) : [];
  return items.flatMap((u) => {
    const url = typeof u === 'string' ? u : u && typeof u === 'object' ? (u as { url?: unknown }).url : undefined;
    return typeof url === 'string' && /^https?:\/\//i.test(url) ? [outputOf(url, origin)] : [];
  });
}

/** A file stored outside this service: a plain link (it opens in a new tab), saying where it is. */
export function ElsewhereLink(props: { output: Output }) {
  const { output } = props;
  return (
    <p class="output-elsewhere">
      <a href={output.url} target="_blank" rel="noopener noreferrer">
        Open {output.name}
      </a>{' '}
      <span class="muted">(stored elsewhere, at {output.host}: not shown here)</span>
    </p>
  );
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
  if (!output.local) return <ElsewhereLink output={output} />;
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
  const preview = outputs.find((o) => o.kind === 'image' && o.local)?.url;
  const hasModel = outputs.some((o) => o.kind === 'model' && o.local);
  const shown = hasModel ? outputs.filter((o) => !(o.kind === 'image' && o.local)) : outputs;
  return (
    <div class="outputs">
      {shown.map((o) =>
        o.local ? (
          <figure key={o.url}>
            <MediaView output={o} poster={hasModel ? preview : undefined} alt={props.alt} />
            <figcaption>
              <a href={o.url} download={o.name}>
                Download {o.name}
              </a>
            </figcaption>
          </figure>
        ) : (
          <ElsewhereLink key={o.url} output={o} />
        ),
      )}
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
