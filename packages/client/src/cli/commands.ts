import { parseArgs } from 'node:util';
import type { Job } from '../index.js';
import { EXIT, UsageError } from './exit.js';
import { CONNECTION_OPTIONS, onlyId } from './generate.js';
import { help } from './context.js';
import type { ClientContext } from './context.js';
import { uploadFile } from './upload.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const jobLine = (j: Job) => `${j.job_id}  ${j.status.padEnd(21)}  ${j.created_at}  ${j.type}\n`;

function noPositionals(positionals: string[], command: string): void {
  if (positionals.length) throw new UsageError(`mediagen ${command} takes no argument, got '${positionals[0]}'`);
}

function limitOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UsageError(`--limit takes an integer from 1 to 1000, got '${raw}'`);
  return n;
}

export const JOBS_LIST_HELP = `Usage: mediagen jobs list [--status STATUS] [--type TYPE]... [--tag TAG] [--limit N] [--cursor C | --all] [--json]

Lists jobs, newest first: one page (its next cursor on stderr), or with --all every page.
--tag lists only the jobs created with that tag (generate --tag).
`;

export async function jobsList(ctx: ClientContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...CONNECTION_OPTIONS, status: { type: 'string' }, type: { type: 'string', multiple: true }, tag: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) return help(ctx, JOBS_LIST_HELP);
  noPositionals(positionals, 'jobs list');
  if (values.all && values.cursor !== undefined) throw new UsageError('give --cursor or --all, not both');
  const client = ctx.client(values, true);
  const limit = limitOf(values.limit);
  const query = {
    ...(values.status !== undefined ? { status: values.status as Job['status'] } : {}),
    ...(values.type ? { types: values.type } : {}),
    ...(values.tag !== undefined ? { tag: values.tag } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
  if (values.all) {
    const items: Job[] = [];
    for await (const job of client.jobs.iterate(query)) {
      if (values.json) items.push(job);
      else ctx.stdout.write(jobLine(job));
    }
    if (values.json) ctx.stdout.write(json(items));
    return EXIT.ok;
  }
  const page = await client.jobs.list({ ...query, ...(values.cursor !== undefined ? { cursor: values.cursor } : {}) });
  if (values.json) ctx.stdout.write(json(page));
  else {
    for (const job of page.items) ctx.stdout.write(jobLine(job));
    if (page.next_cursor) ctx.stderr.write(`more: mediagen jobs list --cursor ${page.next_cursor} (or --all)\n`);
  }
  return EXIT.ok;
}

export const JOBS_ID_HELP = `Usage: mediagen jobs get|cancel|delete ID [--json]

get: prints the job (JSON). cancel: cancels it and keeps its record (409, exit 5, if it had ended).
delete: removes it and its outputs (a job in progress is cancelled first).
`;

export async function jobsById(ctx: ClientContext, action: 'get' | 'cancel' | 'delete', argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: CONNECTION_OPTIONS, strict: true, allowPositionals: true });
  if (values.help) return help(ctx, JOBS_ID_HELP);
  const id = onlyId(positionals, `jobs ${action}`);
  const client = ctx.client(values, true);
  if (action === 'get') ctx.stdout.write(json(await client.jobs.get(id)));
  else if (action === 'cancel') {
    const job = await client.jobs.cancel(id);
    ctx.stdout.write(values.json ? json(job) : `${job.job_id} ${job.status}\n`);
  } else {
    const gone = await client.jobs.delete(id);
    ctx.stdout.write(values.json ? json(gone) : `${gone.job_id} deleted\n`);
  }
  return EXIT.ok;
}

export const ASSETS_HELP = `Usage: mediagen assets upload FILE [--description TEXT] [--json]

Uploads FILE (an image, video, audio file or GLB model) as an asset and prints its id and URL:
give the URL in any URL field of a request (e.g. --set image_url=URL), or let generate upload it:
--set image_url=@FILE.
`;

export async function assetsCommand(ctx: ClientContext, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help') return help(ctx, ASSETS_HELP);
  if (sub !== 'upload') throw new UsageError(`unknown assets command '${sub}'; the command is: upload`);
  const { values, positionals } = parseArgs({ args: rest, options: { ...CONNECTION_OPTIONS, description: { type: 'string' } }, strict: true, allowPositionals: true });
  if (values.help) return help(ctx, ASSETS_HELP);
  if (positionals.length !== 1) throw new UsageError(`mediagen assets upload takes one FILE, got ${positionals.length}`);
  const file = positionals[0]!;
  const client = ctx.client(values, true);
  const asset = await uploadFile(client, file, values.description);
  ctx.stdout.write(values.json ? json(asset) : `${asset.id}  ${asset.image_url}\n`);
  return EXIT.ok;
}

export const USAGE_HELP = `Usage: mediagen usage [--start TIME] [--end TIME] [--json]

The charged jobs in a time window (default: the last 30 days), every page, and their total.
TIME is an ISO 8601 date-time such as 2026-11-01T00:00:00Z.
`;

export async function usageCommand(ctx: ClientContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { ...CONNECTION_OPTIONS, start: { type: 'string' }, end: { type: 'string' } }, strict: true, allowPositionals: true });
  if (values.help) return help(ctx, USAGE_HELP);
  noPositionals(positionals, 'usage');
  const client = ctx.client(values, true);
  const query = { ...(values.start !== undefined ? { start: values.start } : {}), ...(values.end !== undefined ? { end: values.end } : {}) };
  let micros = 0;
  const items = [];
  for await (const item of client.usageItems(query)) {
    items.push(item);
    micros += Math.round(Number(item.cost_usd) * 1_000_000);
    if (!values.json) ctx.stdout.write(`${item.completed_at}  ${item.job_id}  ${item.cost_usd.padStart(12)}  ${item.type}\n`);
  }
  const total = (micros / 1_000_000).toFixed(6);
  if (values.json) ctx.stdout.write(json({ items, total_usd: total }));
  else ctx.stdout.write(`total ${total} USD for ${items.length} job${items.length === 1 ? '' : 's'}\n`);
  return EXIT.ok;
}
