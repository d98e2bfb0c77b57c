import type { ComponentChildren } from 'preact';
import { lazy, Suspense } from 'preact/compat';
import type { NavItem } from '../components/layout.js';
import { Empty, Link, Loading, PageTitle } from '../components/ui.js';
import type { Route } from '../lib/router.js';

/**
 * The route table: a URL path under /console to its page. Pages load on first visit, so the first
 * load carries only the shell (the Usage page's charting library and the 3D viewer never ride on it).
 */
const Playground = lazy(() => import('./playground.js').then((m) => ({ default: m.Playground })));
const Jobs = lazy(() => import('./jobs.js').then((m) => ({ default: m.Jobs })));
const JobPage = lazy(() => import('./job.js').then((m) => ({ default: m.JobPage })));
const Gallery = lazy(() => import('./gallery.js').then((m) => ({ default: m.Gallery })));
const Usage = lazy(() => import('./usage.js').then((m) => ({ default: m.Usage })));
const Workspace = lazy(() => import('./workspace.js').then((m) => ({ default: m.Workspace })));

export interface Page {
  readonly title: string;
  readonly nav: NavItem;
  readonly body: ComponentChildren;
}

const loaded = (body: ComponentChildren) => <Suspense fallback={<Loading />}>{body}</Suspense>;

export function pageFor(route: Route): Page {
  const [first, second, ...rest] = route.path.split('/');
  if (rest.length === 0) {
    if (first === 'playground' && second === undefined) return { title: 'Playground', nav: 'playground', body: loaded(<Playground query={route.query} />) };
    if (first === 'jobs' && second === undefined) return { title: 'Jobs', nav: 'jobs', body: loaded(<Jobs query={route.query} />) };
    if (first === 'jobs' && second) return { title: 'Job', nav: 'jobs', body: loaded(<JobPage id={second} />) };
    if (first === 'gallery' && second === undefined) return { title: 'Gallery', nav: 'gallery', body: loaded(<Gallery query={route.query} />) };
    if (first === 'usage' && second === undefined) return { title: 'Usage', nav: 'usage', body: loaded(<Usage query={route.query} />) };
    if (first === 'workspace' && second === undefined) return { title: 'Workspace', nav: 'workspace', body: loaded(<Workspace />) };
  }
  return {
    title: 'Not found',
    nav: undefined,
    body: (
      <>
        <PageTitle>Page not found</PageTitle>
        <Empty>
          There is no console page here. <Link to="playground">Go to the playground</Link>.
        </Empty>
      </>
    ),
  };
}
