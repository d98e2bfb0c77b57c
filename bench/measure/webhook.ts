import { createJob, next } from '../lib/client.js';
import { startReceiver } from '../lib/receiver.js';
import { quantiles, sleep } from '../lib/stats.js';
import type { Quantiles } from '../lib/stats.js';
import type { BenchServer } from '../lib/wiring.js';

/**
 * Webhook latency: from the commit of a job's terminal status (the same transaction writes the
 * delivery to the outbox and announces `webhook` at commit) to the end of the delivery's body at a
 * loopback receiver. One job at a time.
 */
export async function webhookLatency(server: BenchServer, samples: number): Promise<{ figures: Quantiles; n: number }> {
  const receiver = await startReceiver();
  const out: number[] = [];
  try {
    for (let i = 0; i <= samples; i++) {
      let ended: number | undefined;
      const off = server.onCommitted('webhook', (at) => (ended ??= at));
      const delivered = next<{ id: string; at: number }>((resolve) => receiver.onDelivery((id, at) => resolve({ id, at })), 'a webhook delivery');
      const id = await createJob(server, { 'x-webhook-url': receiver.url });
      const got = await delivered;
      off();
      if (got.id !== id) throw new Error(`the receiver got job ${got.id}, not ${id}`);
      if (ended === undefined) throw new Error('no webhook event was announced at the end of the job');
      if (i > 0) out.push(got.at - ended);
      await sleep(Math.random() * 3);
    }
  } finally {
    receiver.onDelivery(undefined);
    await receiver.close();
  }
  return { figures: quantiles(out), n: out.length };
}
