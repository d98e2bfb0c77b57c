import { afterAll, beforeAll } from 'vitest';

/**
 * A test file that leaves a server, a socket or a child process behind fails (design.md: "a test
 * that leaks a timer, a worker or a connection fails"). Compares the process's active resources
 * after the file with those before it, allowing closing handles a moment to go. Timers are not
 * watched: Node reports timers of one duration as a single resource, so a count cannot see them.
 */
const WATCHED = new Set(['TCPServerWrap', 'TCPSocketWrap', 'PipeWrap', 'ProcessWrap', 'TTYWrap']);

function counts(): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) if (WATCHED.has(r)) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

function leaked(before: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [kind, n] of counts()) if (n > (before.get(kind) ?? 0)) out.push(`${n - (before.get(kind) ?? 0)} ${kind}`);
  return out;
}

let before = new Map<string, number>();
beforeAll(() => {
  before = counts();
});

afterAll(async () => {
  for (let i = 0; i < 50 && leaked(before).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  const left = leaked(before);
  if (left.length > 0) throw new Error(`this test file left resources behind: ${left.join(', ')}`);
});
