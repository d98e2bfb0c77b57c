import { useState } from 'preact/hooks';
import type { components } from '../../../../src/client/index.js';
import { ConfirmButton } from '../../components/confirm.js';
import { ErrorNote } from '../../components/ui.js';
import { when } from '../../lib/format.js';
import { useSession } from '../../lib/session.js';

type Secret = components['schemas']['WebhookSecret'];

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
          <p class="secret" aria-label="Webhook signing secret">
            {secret.secret}
          </p>
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
        <ConfirmButton
          label="Rotate secret"
          question="Rotate the webhook signing secret? The current one keeps signing for 24 hours, so receivers can switch over."
          confirmLabel="Rotate"
          onConfirm={() => act(mg.webhooks.rotateSecret())}
        />
      </div>
    </section>
  );
}
