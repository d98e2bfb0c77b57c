import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { MediagenError } from '../../src/client/index.js';
import { Layout } from './components/layout.js';
import { Loading } from './components/ui.js';
import { navigate, useRoute } from './lib/router.js';
import { SessionContext, clientFor, forgetToken, storeToken, storedToken } from './lib/session.js';
import type { Session, WorkspaceView } from './lib/session.js';
import { SignIn } from './pages/sign-in.js';
import { pageFor } from './pages/index.js';

type State =
  | { kind: 'signed-out'; message?: string | undefined }
  | { kind: 'loading'; token: string }
  | { kind: 'signed-in'; token: string; workspace: WorkspaceView };

/** The console: sign-in until a token is accepted, then the page the URL names. */
export function App() {
  const [state, setState] = useState<State>(() => {
    const token = storedToken();
    return token ? { kind: 'loading', token } : { kind: 'signed-out' };
  });
  const signOut = useCallback((message?: string) => {
    forgetToken();
    setState({ kind: 'signed-out', message });
  }, []);
  const token = state.kind === 'signed-out' ? undefined : state.token;
  const mg = useMemo(() => (token ? clientFor(token, (m) => signOut(m)) : undefined), [token, signOut]);

  useEffect(() => {
    if (state.kind !== 'loading' || !mg) return;
    let live = true;
    mg.workspace.get().then(
      (workspace) => live && setState({ kind: 'signed-in', token: state.token, workspace }),
      (err: unknown) => {
        // A 401 has already signed out with the API's message.
        if (live && !(err instanceof MediagenError && err.status === 401)) signOut(err instanceof Error ? err.message : String(err));
      },
    );
    return () => {
      live = false;
    };
  }, [state, mg, signOut]);

  const refreshWorkspace = useCallback(async () => {
    if (!mg) return;
    const workspace = await mg.workspace.get();
    setState((s) => (s.kind === 'signed-in' ? { ...s, workspace } : s));
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
  if (state.kind === 'loading' || !mg) return <Loading label="Signing in…" />;
  const session: Session = { mg, workspace: state.workspace, refreshWorkspace, signOut };
  return (
    <SessionContext value={session}>
      <Signed />
    </SessionContext>
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
