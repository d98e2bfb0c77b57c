/**
 * CPU profiles of this process through the inspector (no --cpu-prof flag), and a flame summary of
 * one: self time grouped by area (a node_modules package, src/<folder>, a Node module, GC, idle)
 * and the functions with the most self time.
 */
import { findSourceMap } from 'node:module';
import { Session } from 'node:inspector/promises';
import type { Profiler } from 'node:inspector';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Runs `fn` under the sampling profiler (one sample every `intervalUs`) and returns the profile too. */
export async function profiled<T>(fn: () => Promise<T>, intervalUs = 200): Promise<{ result: T; profile: Profiler.Profile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    const outcome = await fn().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const { profile } = await session.post('Profiler.stop');
    if (!outcome.ok) throw outcome.error;
    return { result: outcome.value, profile };
  } finally {
    session.disconnect();
  }
}

/** autocannon and what it loads: the load generator, which shares this process with the server. */
const LOAD = new Set(['autocannon', 'hdr-histogram-js', '@assemblyscript/loader', 'http-parser-js', 'hyperid', 'reinterval', 'retimer']);

/**
 * Where a frame's code lives, as the summary groups it (`root`: the repository, our paths). Native
 * code (V8 builtins, bindings, SQLite) and wasm have no file; the summary puts them in their
 * caller's area, marked `(native)`.
 */
export function areaOf(url: string, functionName: string, root: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('wasm:')) return '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).replace(/^internal\/(deps\/)?/, '').split('/')[0]!.replace(/\.js$/, '')}`;
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (nm >= 0) {
    const [a, b] = path.slice(nm + 14).split(sep);
    const name = a!.startsWith('@') ? `${a}/${b}` : a!;
    return LOAD.has(name) ? 'autocannon (the load)' : name;
  }
  const rel = relative(root, path);
  if (rel.startsWith('..')) return path;
  const parts = rel.split(sep);
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : parts.length > 1 ? parts[0]! : rel;
}

/** file:line of a frame: our files relative to `root`, a package's from its name, lines of the TypeScript source where a source map says. */
function where(frame: Profiler.ProfileNode['callFrame'], root: string): string {
  if (!frame.url) return '';
  let line = frame.lineNumber + 1;
  const original = frame.url.startsWith('file:') ? (findSourceMap(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber) as { originalLine?: number } | undefined) : undefined;
  if (typeof original?.originalLine === 'number') line = original.originalLine + 1;
  if (!frame.url.startsWith('file:')) return `${frame.url}:${line}`;
  const path = fileURLToPath(frame.url);
  const nm = path.lastIndexOf(`${sep}node_modules${sep}`);
  return `${nm >= 0 ? path.slice(nm + 14) : relative(root, path)}:${line}`;
}

export interface Share {
  readonly name: string;
  readonly ms: number;
  /** Per cent of the sampled time that was not idle. */
  readonly pct: number;
}

export interface FlameSummary {
  readonly samples: number;
  /** Wall time the profile covers, and the part of it that was not `(idle)`. */
  readonly totalMs: number;
  readonly busyMs: number;
  readonly areas: Share[];
  readonly functions: (Share & { readonly area: string })[];
}

/** Self time per node: each sample lasts until the next one (the last one until the profile's end). */
export function summarize(profile: Profiler.Profile, root: string, top = 15): FlameSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let t = profile.startTime;
  const stamps = deltas.map((d) => (t += d));
  samples.forEach((id, i) => {
    const us = (i + 1 < stamps.length ? stamps[i + 1]! : profile.endTime) - stamps[i]!;
    self.set(id, (self.get(id) ?? 0) + Math.max(0, us));
  });
  const parent = new Map<number, Profiler.ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const areas = new Map<string, number>();
  const fns = new Map<string, { us: number; area: string }>();
  let idle = 0;
  let total = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    let area = areaOf(frame.url, frame.functionName, root);
    let key = `${frame.functionName || '(anonymous)'}  ${where(frame, root)}`.trim();
    total += us;
    if (area === '(idle)') {
      idle += us;
      continue;
    }
    if (area === '(native)') {
      // Native code goes to the nearest caller outside Node (a socket write to pg's or to the HTTP
      // client's), else to the nearest Node module; better-sqlite3's statements are native methods
      // Kysely's SQLite driver calls. The function keeps its direct caller.
      const callers: Profiler.ProfileNode['callFrame'][] = [];
      for (let c = parent.get(id); c; c = parent.get(c.id)) if (areaOf(c.callFrame.url, c.callFrame.functionName, root) !== '(native)') callers.push(c.callFrame);
      const outside = callers.find((c) => !c.url.startsWith('node:') && !c.functionName.startsWith('('));
      const from = outside ?? callers[0];
      const sqlite = from && /better-sqlite3|dialect\/sqlite|store\/sqlite/.test(from.url);
      area = sqlite ? 'better-sqlite3 (native)' : from && !from.functionName.startsWith('(') ? `${areaOf(from.url, from.functionName, root)} (native)` : '(native)';
      if (callers[0]) key += `  ← ${callers[0].functionName || '(anonymous)'} ${where(callers[0], root)}`;
    }
    areas.set(area, (areas.get(area) ?? 0) + us);
    const f = fns.get(key) ?? { us: 0, area };
    f.us += us;
    fns.set(key, f);
  }
  const busy = total - idle;
  const share = (name: string, us: number): Share => ({ name, ms: us / 1000, pct: busy > 0 ? (100 * us) / busy : 0 });
  return {
    samples: samples.length,
    totalMs: total / 1000,
    busyMs: busy / 1000,
    areas: [...areas].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => share(name, us)),
    functions: [...fns]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([name, f]) => ({ ...share(name, f.us), area: f.area })),
  };
}

export function formatSummary(title: string, s: FlameSummary): string {
  const pct = (x: number) => `${x.toFixed(1).padStart(5)} %`;
  const ms = (x: number) => `${Math.round(x).toLocaleString('en').padStart(7)} ms`;
  return [
    `${title}: ${s.samples.toLocaleString('en')} samples over ${Math.round(s.totalMs).toLocaleString('en')} ms, ${Math.round(s.busyMs).toLocaleString('en')} ms not idle`,
    '  self time by area (% of non-idle time):',
    ...s.areas.map((a) => `    ${pct(a.pct)} ${ms(a.ms)}  ${a.name}`),
    '  functions by self time:',
    ...s.functions.map((f) => `    ${pct(f.pct)} ${ms(f.ms)}  ${f.name}  [${f.area}]`),
  ].join('\n');
}
