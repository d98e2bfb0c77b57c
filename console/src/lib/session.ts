import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Mediagen } from '../../../packages/client/src/index.js';
import type { components } from '../../../packages/client/src/index.js';
import { API_BASE } from './router.js';

/**
 * The signed-in session: the pasted API token and the client that sends it. The token lives in
 * sessionStorage (gone with the tab) unless "remember me" put it in localStorage; never in a URL,
 * a cookie or a log line. Any 401 from the API ends the session with the API's own message.
 */

export type WorkspaceView = components['schemas']['Workspace'];

const KEY = 'mediagen.console.token';

export function storedToken(): string | null {
  return sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
}

export function storeToken(token: string, remember: boolean): void {
  forgetToken();
  (remember ? localStorage : sessionStorage).setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

/**
 * A client whose every 401 calls `onUnauthorized` with the API's message (a revoked or wrong token
 * ends the session wherever it is noticed). Other answers go to the caller as usual.
 */
export function clientFor(token: string, onUnauthorized: (message: string) => void): Mediagen {
  const watched: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 401) {
      const body = (await res.clone().json().catch(() => null)) as { error?: unknown } | null;
      onUnauthorized(typeof body?.error === 'string' ? body.error : 'the API refused this token');
    }
    return res;
  };
  // Interactive: a short retry of 429/503, so a page never hangs on a long Retry-After.
  return new Mediagen({ baseUrl: API_BASE, token, fetch: watched, retry: { retries: 2, maxDelayMs: 5_000 } });
}

export interface Session {
  readonly mg: Mediagen;
  readonly workspace: WorkspaceView;
  /** Reads GET /workspace again (the balance after a job, say). */
  readonly refreshWorkspace: () => Promise<void>;
  readonly signOut: (message?: string) => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in console');
  return s;
}

/** Owners and admins manage tokens and webhook settings (spec 5.3). */
export const canManage = (w: WorkspaceView) => w.role === 'owner' || w.role === 'admin';
