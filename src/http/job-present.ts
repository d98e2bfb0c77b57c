import { resolveUrl } from '../lib/urls.js';
import type { JobView } from '../services/job-view.js';

/**
 * The store keeps output URL paths (`/outputs/<key>/<name>`), not absolute URLs, so a job written
 * by a worker on another machine, or before the public URL changed, is shown at this server's
 * public URL. They resolve under it, path prefix included (https://host/api/outputs/...).
 */
export function presentJob(view: JobView, publicUrl: string): JobView {
  const urls = view.result?.urls;
  if (!Array.isArray(urls)) return view;
  return { ...view, result: { ...view.result, urls: urls.map((u: string) => resolveUrl(u.replace(/^\/+/, ''), publicUrl)) } };
}
