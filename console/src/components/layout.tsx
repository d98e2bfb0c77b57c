import type { ComponentChildren } from 'preact';
import { usd } from '../lib/format.js';
import { canManage, useSession } from '../lib/session.js';
import { Link } from './ui.js';

export type NavItem = 'playground' | 'jobs' | 'gallery' | 'usage' | 'workspace' | undefined;

const NAV: ReadonlyArray<{ id: Exclude<NavItem, undefined>; label: string; managers?: boolean }> = [
  { id: 'playground', label: 'Playground' },
  { id: 'jobs', label: 'Jobs' },
  { id: 'gallery', label: 'Gallery' },
  { id: 'usage', label: 'Usage' },
  { id: 'workspace', label: 'Workspace', managers: true },
];

/** The frame of every signed-in page: a skip link, the workspace, its balance, the navigation, sign out. */
export function Layout(props: { current: NavItem; children: ComponentChildren }) {
  const { workspace, signOut } = useSession();
  const items = NAV.filter((n) => !n.managers || canManage(workspace));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <Link to="playground" class="logo" aria-label="mediagen console home">
            mediagen
          </Link>
          <span class="workspace" title={`Workspace ${workspace.name}`}>
            {workspace.name}
          </span>
        </div>
        <nav aria-label="Console">
          <ul>
            {items.map((n) => (
              <li key={n.id}>
                <Link to={n.id} aria-current={props.current === n.id ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          {/* Named by visible text: aria-label on a plain span is not reliably announced. */}
          <p class="balance">
            <span class="balance-label" id="balance-label">
              Available
            </span>{' '}
            <output aria-labelledby="balance-label">{usd(workspace.available_usd)}</output>
          </p>
          <button type="button" class="link-button" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
