import { describe, expect, it } from 'vitest';
import { assetInspector } from '../../src/app/asset-inspector.js';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { DEFAULT_MEDIA_LIMITS } from '../../src/engines/media/media-limits.js';
import type { Inspection } from '../../src/services/assets/assets.js';

describe('the asset inspector', () => {
  it('runs one inspection per slot, lets four per slot wait, and answers the rest busy (503 with Retry-After)', async () => {
    let running = 0;
    let most = 0;
    const finish: Array<() => void> = [];
    const slow = async (): Promise<Inspection> => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => finish.push(resolve));
      running--;
      return { ok: false, message: 'checked' };
    };
    const inspect = assetInspector(DEFAULT_MEDIA_LIMITS, 1, slow);
    const signal = new AbortController().signal;
    const admitted = Array.from({ length: 5 }, () => inspect('/nowhere', signal));
    const refused = await inspect('/nowhere', signal).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'unavailable', details: { retryAfterSeconds: 5 } });
    // Let them through one by one.
    for (let done = 0; done < 5; done++) {
      while (finish.length === 0) await new Promise((r) => setImmediate(r));
      finish.shift()!();
    }
    expect(await Promise.all(admitted)).toHaveLength(5);
    expect(most).toBe(1);
  });
});
