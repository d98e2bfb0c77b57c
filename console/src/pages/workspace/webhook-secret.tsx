import { useState } from 'preact/hooks';
import type { components } from '../../../../packages/client/src/index.js';
import { ConfirmButton } from '../../components/confirm.js';
import { ErrorNote } from '../../components/ui.js';
import { when } from '../../lib/format.js';
import { useSession } from '../../lib/session.js';

type Secret = components['schemas']['WebhookSecret'];

/**
 * What a rotation does, for the question asked before it. The API keeps one previous secret
 * signing for 24 hours: a second rotation within them replaces that one, so the secret before it
 * stops signing at once. Said for certain when the shown secret tells whether an older one still
 * signs; when the secret has not been read, both cases are said.
 */
function rotateQuestion(secret: Pick<Secret, 'previous_secret_valid_until'> | undefined, now = Date.now()): string {
  const base = 'Rotate the webhook signing secret? The current secret keeps signing for 24 hours, so receivers can switch over.';
  if (!secret) return `${base} If it was itself made by a rotation in the last 24 hours, the secret before it stops signing now.`;
  const until = secret.previous_secret_valid_until;
  if (until && Date.parse(until) > now) {
    return `${base} The older secret, which still signs until ${when(until)}, stops signing now: receivers still verifying with it will refuse webhooks.`;
  }
  return base;
}

/**
 * The workspace's webhook signing secret (Standard Webhooks): hidden until asked for, and rotated
 * with the previous secret still signing for a day, so receivers can switch over.
 */
export function WebhookSecret() {
  const { mg } = useSession();
  const [secret, setSecret] = useState<Secret>();
  const [error, setError] = useState<unknown>();
  const act = (p: Promise<Secret>) =>
    p.then(
      (s) => {
        setSecret(s);
        setError(undefined);
      },
      (err: unknown) => setError(err),
    );
  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhook signing</h2>
      <p class="muted">
        Jobs created with an <code>X-Webhook-URL</code> header are POSTed there when they end, signed with this secret (Standard Webhooks).
      </p>
      <ErrorNote error={error} />
      {secret ? (
        <>
          {/* A visible name for the secret: aria-label on a plain element is not reliably announced. */}
          <p class="secret-label" id="webhook-secret-label">
            Webhook signing secret
          </p>
          <output class="secret" aria-labelledby="webhook-secret-label">
            {secret.secret}
          </output>
          {secret.previous_secret_valid_until ? (
            <p class="muted">The previous secret also signs until {when(secret.previous_secret_valid_until)}.</p>
          ) : null}
        </>
      ) : null}
      <div class="actions">
        {secret ? (
          <button type="button" onClick={() => setSecret(undefined)}>
            Hide secret
          </button>
        ) : (
          <button type="button" onClick={() => act(mg.webhooks.secret())}>
            Show secret
          </button>
        )}
        <ConfirmButton label="Rotate secret" question={rotateQuestion(secret)} confirmLabel="Rotate" onConfirm={() => act(mg.webhooks.rotateSecret())} />
      </div>
    </section>
  );
}
