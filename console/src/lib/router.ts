import { useEffect, useState } from 'preact/hooks';

/**
 * The console's routes are paths under `<base>/console/`, kept in the browser's history so each
 * page has a URL to share and the back button works. The server answers every such path with
 * index.html; this module maps the path to a page.
 */

/** Where the console is mounted: `/console` behind any path prefix the server sits under. */
export const CONSOLE_ROOT = (() => {
  const at = location.pathname.indexOf('/console');
  return at >= 0 ? location.pathname.slice(0, at + '/console'.length) : '/console';
})();

/** The API's base URL: this origin with the prefix the console sits under. */
export const API_BASE = location.origin + CONSOLE_ROOT.slice(0, -'/console'.length);

export interface Route {
  /** The path below the console root, without a trailing slash: '' for the root, 'jobs/abc' for a job. */
  readonly path: string;
  readonly query: URLSearchParams;
}

function current(): Route {
  const rest = location.pathname.startsWith(CONSOLE_ROOT) ? location.pathname.slice(CONSOLE_ROOT.length) : '';
  return { path: rest.replace(/^\/+|\/+$/g, ''), query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/** The href of a console path, such as `jobs/abc` or `gallery?kind=video`. */
export const href = (path: string) => `${CONSOLE_ROOT}/${path.replace(/^\/+/, '')}`;

export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  const url = href(path);
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((l) => l());
  if (!opts.replace) window.scrollTo(0, 0);
}

/** The current route; re-renders on navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return route;
}

/** Navigates within the console for a plain left click on a console link; other clicks (new tab) go to the browser. */
export function followLink(e: MouseEvent): void {
  const a = (e.currentTarget ?? e.target) as HTMLAnchorElement;
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.origin !== location.origin || !a.pathname.startsWith(CONSOLE_ROOT)) return;
  e.preventDefault();
  navigate(a.pathname.slice(CONSOLE_ROOT.length) + a.search);
}
