import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { MediagenError } from '../../packages/client/src/index.js';
import { Layout } from './components/layout.js';
import { ErrorNote, Loading } from './components/ui.js';
import { navigate, useRoute } from './lib/router.js';
import { SessionContext, clientFor, forgetToken, storeToken, storedToken } from './lib/session.js';
import type { Session, WorkspaceView } from './lib/session.js';
import { SignIn } from './pages/sign-in.js';
import { pageFor } from './pages/index.js';

type State =
  | { kind: 'signed-out'; message?: string | undefined }
  | { kind: 'loading'; token: string }
  /** The kept token could not be checked (no answer, a 5xx): it is kept, and checked again on request. */
  | { kind: 'unchecked'; token: string; error: unknown }
  | { kind: 'signed-in'; token: string; workspace: WorkspaceView };

const tokenOf = (s: State) => (s.kind === 'signed-out' ? undefined : s.token);

/** The console: sign-in until a token is accepted, then the page the URL names. */
export function App() {
  const [state, setStateNow] = useState<State>(() => {
    const token = storedToken();
    return token ? { kind: 'loading', token } : { kind: 'signed-out' };
  });
  // The session's token as of the last change, read by a client's 401 callback: a request of an
  // earlier session (another token) answering late must not end the current one.
  const current = useRef<string | undefined>(tokenOf(state));
  const setState = useCallback((next: State) => {
    current.current = tokenOf(next);
    setStateNow(next);
  }, []);
  const signOut = useCallback(
    (message?: string) => {
      forgetToken();
      setState({ kind: 'signed-out', message });
    },
    [setState],
  );
  const token = tokenOf(state);
  const mg = useMemo(
    () => (token ? clientFor(token, (m) => current.current === token && signOut(m)) : undefined),
    [token, signOut],
  );

  useEffect(() => {
    if (state.kind !== 'loading' || !mg) return;
    let live = true;
    mg.workspace.get().then(
      (workspace) => live && setState({ kind: 'signed-in', token: state.token, workspace }),
      (err: unknown) => {
        // A 401 has already signed out with the API's message. Anything else (the server down or
        // unreachable, a 5xx) says nothing about the token: it is kept, and the check can be retried.
        if (live && !(err instanceof MediagenError && err.status === 401)) setState({ kind: 'unchecked', token: state.token, error: err });
      },
    );
    return () => {
      live = false;
    };
  }, [state, mg, signOut, setState]);

  const refreshWorkspace = useCallback(async () => {
    if (!mg) return;
    const workspace = await mg.workspace.get();
    setStateNow((s) => (s.kind === 'signed-in' ? { ...s, workspace } : s));
  }, [mg]);

  if (state.kind === 'signed-out') {
    return (
      <SignIn
        message={state.message}
        onSignIn={async (t, remember) => {
          const probe = clientFor(t, () => undefined);
          try {
            const workspace = await probe.workspace.get();
            storeToken(t, remember);
            setState({ kind: 'signed-in', token: t, workspace });
          } catch (err) {
            throw new Error(err instanceof MediagenError ? err.message : 'The server could not be reached.');
          }
        }}
      />
    );
  }
  if (state.kind === 'unchecked') {
    return <Unchecked error={state.error} onRetry={() => setState({ kind: 'loading', token: state.token })} onSignOut={() => signOut()} />;
  }
  if (state.kind === 'loading' || !mg) return <Loading label="Signing in…" />;
  const session: Session = { mg, workspace: state.workspace, refreshWorkspace, signOut };
  return (
    <SessionContext value={session}>
      <Signed />
    </SessionContext>
  );
}

/** The kept token could not be checked: why, a way to try again, and a way out to another token. */
function Unchecked(props: { error: unknown; onRetry: () => void; onSignOut: () => void }) {
  return (
    <main class="sign-in" id="main">
      <div class="card">
        <h1>mediagen console</h1>
        <ErrorNote error={props.error} title="Your workspace could not be loaded" />
        <p class="muted">You are still signed in: try again once the server answers.</p>
        <div class="actions">
          <button type="button" class="primary" onClick={props.onRetry}>
            Try again
          </button>
          <button type="button" onClick={props.onSignOut}>
            Sign out
          </button>
        </div>
      </div>
    </main>
  );
}

function Signed() {
  const route = useRoute();
  useEffect(() => {
    if (route.path === '') navigate('playground', { replace: true });
  }, [route.path]);
  const page = pageFor(route);
  useEffect(() => {
    document.title = `${page.title} · mediagen console`;
  }, [page.title]);
  return <Layout current={page.nav}>{page.body}</Layout>;
}
