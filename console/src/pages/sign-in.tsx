import { useState } from 'preact/hooks';

/** Sign in by pasting an API token; the console checks it with GET /workspace before keeping it. */
export function SignIn(props: { message?: string | undefined; onSignIn: (token: string, remember: boolean) => Promise<void> }) {
  const [token, setToken] = useState('');
  const [remember, setRemember] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return setError('Paste an API token first.');
    setBusy(true);
    setError(undefined);
    try {
      await props.onSignIn(t, remember);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const shown = error ?? props.message;
  return (
    <main class="sign-in" id="main">
      <form onSubmit={submit} class="card" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to mediagen</h1>
        <p class="muted">
          Paste an API token. The first start of the server prints one; owners and admins make more with <code>mediagen admin token create</code> or
          on the Workspace page.
        </p>
        {shown ? (
          <div class="note note-error" role="alert">
            {shown}
          </div>
        ) : null}
        <label>
          API token
          <input
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
            required
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
          Remember me on this browser
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
