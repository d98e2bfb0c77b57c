import type { Clock } from '../../lib/clock.js';
import type { Log } from '../../lib/log.js';
import type { ProviderEngine } from './provider-engine.js';
import type { UpstreamNudges } from './upstream-nudges.js';

/** What the webhook route gets back: `unknown` (no such provider, or one without webhooks) answers 404, `refused` 401. */
export type WebhookVerdict = 'accepted' | 'refused' | 'unknown';

/**
 * Webhooks from providers (`POST /providers/<name>/webhook`): each is verified with its provider's
 * scheme (Standard Webhooks for Replicate, ED25519 against the JWKS for fal) and, if it checks out,
 * wakes the run polling that job in this process. Nothing else is read from it.
 */
export class ProviderWebhooks {
  readonly #engines: ReadonlyMap<string, ProviderEngine>;
  readonly #nudges: UpstreamNudges;
  readonly #clock: Clock;

  constructor(engines: readonly ProviderEngine[], nudges: UpstreamNudges, clock: Clock) {
    this.#engines = new Map(engines.map((e) => [e.name.slice('provider:'.length), e]));
    this.#nudges = nudges;
    this.#clock = clock;
  }

  async receive(name: string, headers: Readonly<Record<string, string | undefined>>, rawBody: Buffer, log?: Log): Promise<WebhookVerdict> {
    const engine = this.#engines.get(name);
    const adapter = engine?.adapterFor(AbortSignal.timeout(10_000));
    if (!adapter?.verifyWebhook) return 'unknown';
    let verified;
    try {
      verified = await adapter.verifyWebhook(headers, rawBody, this.#clock.nowMs());
    } catch (err) {
      // Its keys could not be fetched: refused now, the provider retries and polling carries on.
      log?.warn({ provider: name, err: { name: (err as Error).name, message: (err as Error).message } }, 'could not verify a provider webhook');
      return 'refused';
    }
    if (!verified) {
      log?.warn({ provider: name }, 'refused a provider webhook whose signature does not verify');
      return 'refused';
    }
    this.#nudges.nudge(name, verified.upstreamId);
    return 'accepted';
  }
}
