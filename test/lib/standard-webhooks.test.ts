import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { isWebhookSecret, newWebhookSecret, signWebhook, webhookHeaders } from '../../src/lib/standard-webhooks.js';

const body = JSON.stringify({ job_id: 'job_1', status: 'completed', result: { urls: ['https://x.test/o.png'] } });
// The reference library checks the timestamp against the real clock (five minutes either way).
const now = () => Math.floor(Date.now() / 1000);

describe('newWebhookSecret', () => {
  it('makes whsec_ + base64 of 24 random bytes, different every time', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24);
    expect(a).not.toBe(b);
    expect(isWebhookSecret(a)).toBe(true);
  });
});

describe('isWebhookSecret', () => {
  const b64 = (n: number) => Buffer.alloc(n, 7).toString('base64');

  it('accepts whsec_ + base64 of 24 to 64 bytes', () => {
    for (const n of [24, 25, 26, 32, 64]) expect(isWebhookSecret(`whsec_${b64(n)}`), `${n} bytes`).toBe(true);
  });

  it('refuses other shapes', () => {
    for (const bad of [
      undefined,
      42,
      '',
      'whsec_',
      b64(24), // no prefix
      `WHSEC_${b64(24)}`,
      `whsec_${b64(23)}`, // too short a key
      `whsec_${b64(65)}`, // too long a key
      `whsec_${b64(24).slice(0, -1)}`, // not a whole base64 quantum
      `whsec_${b64(26).replace(/=+$/, '')}`, // padding missing
      `whsec_${b64(24).replace(/.$/, '-')}`, // base64url alphabet
      `whsec_ ${b64(24)}`,
      `whsec_${b64(24)}\n`,
    ]) {
      expect(isWebhookSecret(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('signWebhook', () => {
  it('produces a signature the standardwebhooks package verifies', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders([secret], 'msg_1', now(), body);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('agrees with the package and with HMAC-SHA256 over id.timestamp.body, for non-ASCII bodies too', () => {
    const secret = newWebhookSecret();
    const text = '{"prompt":"phare au crépuscule 🌅"}';
    const ts = 1_700_000_000;
    const ours = signWebhook([secret], 'msg_5', ts, text);
    expect(ours).toBe(new Webhook(secret).sign('msg_5', new Date(ts * 1000), text));
    const key = Buffer.from(secret.slice(6), 'base64');
    expect(ours).toBe(`v1,${createHmac('sha256', key).update(`msg_5.${ts}.${text}`).digest('base64')}`);
  });

  it('signs with both secrets during a rotation, and each verifies the header alone', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const headers = webhookHeaders([oldSecret, newSecret], 'msg_2', now(), body);
    const parts = headers['webhook-signature'].split(' ');
    expect(parts).toHaveLength(2);
    expect(parts[0]).toBe(signWebhook([oldSecret], 'msg_2', Number(headers['webhook-timestamp']), body));
    expect(parts[1]).toBe(signWebhook([newSecret], 'msg_2', Number(headers['webhook-timestamp']), body));
    expect(new Webhook(oldSecret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(newSecret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    // A third secret verifies neither.
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow(WebhookVerificationError);
  });

  it('fails verification when the body, timestamp or id is changed', () => {
    const secret = newWebhookSecret();
    const ts = now();
    const headers = { ...webhookHeaders([secret], 'msg_3', ts, body) };
    const wh = new Webhook(secret);
    expect(() => wh.verify(body.replace('completed', 'failed'), headers)).toThrow(/No matching signature/);
    expect(() => wh.verify(`${body} `, headers)).toThrow(/No matching signature/);
    expect(() => wh.verify(body, { ...headers, 'webhook-timestamp': String(ts - 1) })).toThrow(/No matching signature/);
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'msg_4' })).toThrow(/No matching signature/);
    // A stale timestamp with a valid signature is refused too: why each attempt is signed afresh.
    const stale = { ...webhookHeaders([secret], 'msg_3', ts - 600, body) };
    expect(() => wh.verify(body, stale)).toThrow(/too old/);
  });

  it('refuses bad input without echoing the secret', () => {
    const leaked = 'whsec_tooShortButSecret';
    let message = '';
    try {
      signWebhook([leaked], 'msg_1', 1, body);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/not a webhook secret/);
    expect(message).not.toContain('tooShort');
    expect(() => signWebhook([], 'msg_1', 1, body)).toThrow(/at least one secret/);
    const ok = newWebhookSecret();
    expect(() => signWebhook([ok], '', 1, body)).toThrow(/webhook id/);
    expect(() => signWebhook([ok], 'msg 1', 1, body)).toThrow(/webhook id/);
    expect(() => signWebhook([ok], 'msg_é', 1, body)).toThrow(/webhook id/);
    expect(() => signWebhook([ok], 'msg_1', 1.5, body)).toThrow(/whole seconds/);
    expect(() => signWebhook([ok], 'msg_1', -1, body)).toThrow(/whole seconds/);
  });
});
