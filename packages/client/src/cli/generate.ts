import { parseArgs } from 'node:util';
import { MediagenError, isTerminal, outputUrls } from '../index.js';
import type { Job, Mediagen } from '../index.js';
import { DownloadError, EXIT, UsageError, exitForJob } from './exit.js';
import { buildBody, downloadOutputs, readStdin } from './output.js';
import { progressFor, seconds } from './progress.js';
import { help } from './context.js';
import type { ClientContext } from './context.js';
import { unknownModel } from './suggest.js';
import { uploadFile } from './upload.js';

export const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const WAIT_OPTIONS = {
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  out: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const GENERATE_HELP = `Usage: mediagen generate MODEL [--prompt TEXT] [--set KEY=VALUE]... [--body FILE] [options]

Creates a job of MODEL (a model path, see 'mediagen models') and, with --wait or --out, follows it
to its end: a status line and bar on a terminal, one line per status change when stderr is piped.
Prints the job id (no wait), the output URLs (--wait), the files written (--out), or the job (--json).

Body:
  --prompt TEXT          the body's prompt
  --set KEY=VALUE        a body field; VALUE is read as JSON when it parses (42, true, [..], {..}),
                         else taken as text; dots in KEY make nested objects (a.b=1). Repeatable.
  --set KEY=@FILE        uploads the local FILE as an asset (POST /assets) and sends its URL
                         (e.g. --set image_url=@photo.png); '@@' starts a text with '@'.
  --body FILE            the body from a JSON file ('-': stdin); --prompt and --set go on top
Options:
  --wait                 wait for the job to end (completed, failed or cancelled)
  --timeout SECONDS      stop waiting after this long (exit 6); implies --wait
  --out DIR              download the outputs into DIR as <job id>-<name>; implies --wait
  --json                 print the job as JSON (as GET /jobs/{id} shows it) instead
  -q, --quiet            no progress on stderr
  --webhook-url URL      X-Webhook-URL: a POST when the job ends
  --tag TAG              a tag for the job (X-Mediagen-Tags): up to 8 of a-z 0-9 _ . : -, 1 to 64
                         characters each; repeatable (--tag team-a --tag campaign-7)
  --idempotency-key KEY  Idempotency-Key (default: one of the client's own)
  --url URL, --token TOKEN, -h/--help   as for every client command
`;

function timeoutOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = Number(raw);
  if (!Number.isFinite(s) || s < 0 || raw.trim() === '') throw new UsageError(`--timeout takes a number of seconds, got '${raw}'`);
  return s;
}

/**
 * Prints what the flags ask for about a waited-for job (downloading its outputs with --out) and
 * returns the exit status its end calls for.
 */
async function finish(ctx: ClientContext, job: Job, flags: { json?: boolean | undefined; out?: string | undefined }): Promise<number> {
  if (flags.json) ctx.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
  if (job.status === 'completed' && flags.out !== undefined) {
    let paths: string[];
    try {
      paths = await downloadOutputs(job, flags.out);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new DownloadError(`job ${job.job_id} completed, but its outputs could not be saved into ${flags.out}: ${why}`);
    }
    if (!flags.json) for (const path of paths) ctx.stdout.write(`${path}\n`);
    else for (const path of paths) ctx.stderr.write(`wrote ${path}\n`);
  } else if (!flags.json) {
    if (job.status === 'completed') for (const url of outputUrls(job)) ctx.stdout.write(`${url}\n`);
  }
  if (job.status === 'failed') ctx.stderr.write(`mediagen: job ${job.job_id} failed: ${job.error?.code ?? 'failed'}${job.error?.message ? `: ${job.error.message}` : ''}\n`);
  else if (job.status === 'cancelled') ctx.stderr.write(`mediagen: job ${job.job_id} was cancelled\n`);
  else if (!isTerminal(job.status)) ctx.stderr.write(`mediagen: job ${job.job_id} is still ${job.status}; follow it with 'mediagen jobs wait ${job.job_id}'\n`);
  return exitForJob(job);
}

/**
 * Waits through `run` with progress shown, then finishes as the job's end calls for. Ctrl-C stops
 * waiting (the job goes on); a job deleted while waited for ends the command as cancelled.
 */
async function waitWithProgress(
  ctx: ClientContext,
  flags: { quiet?: boolean | undefined; json?: boolean | undefined; out?: string | undefined },
  run: (onUpdate: (job: Job) => void, signal: AbortSignal) => Promise<Job>,
): Promise<number> {
  const progress = flags.quiet ? undefined : progressFor(ctx.stderr);
  const ctl = new AbortController();
  let seen: Job | undefined;
  const onInterrupt = () => ctl.abort(new Error('interrupted'));
  process.once('SIGINT', onInterrupt);
  const started = Date.now();
  let job: Job;
  try {
    job = await run((update) => {
      seen = update;
      progress?.update(update);
    }, ctl.signal);
  } catch (err) {
    progress?.stop();
    if (ctl.signal.aborted && seen) {
      ctx.stderr.write(`mediagen: stopped waiting after ${seconds(Date.now() - started)}; job ${seen.job_id} goes on ('mediagen jobs wait ${seen.job_id}')\n`);
      return EXIT.interrupted;
    }
    if (ctl.signal.aborted) {
      // Before the first answer (the POST, or a Retry-After pause): a job may have been made.
      ctx.stderr.write("mediagen: interrupted before the server's answer; a job may have been created ('mediagen jobs list')\n");
      return EXIT.interrupted;
    }
    if (err instanceof MediagenError && err.status === 404 && seen) {
      ctx.stderr.write(`mediagen: job ${seen.job_id} was deleted\n`);
      return EXIT.cancelled;
    }
    throw err;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    progress?.stop();
  }
  return finish(ctx, job, flags);
}

export async function generateCommand(ctx: ClientContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...CONNECTION_OPTIONS,
      ...WAIT_OPTIONS,
      prompt: { type: 'string' },
      set: { type: 'string', multiple: true },
      body: { type: 'string' },
      'webhook-url': { type: 'string' },
      'idempotency-key': { type: 'string' },
      tag: { type: 'string', multiple: true },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) return help(ctx, GENERATE_HELP);
  const [model, ...extra] = positionals;
  if (!model) throw new UsageError("give the model: mediagen generate MODEL ... (list them with 'mediagen models')");
  if (extra.length) throw new UsageError(`unexpected argument '${extra[0]}'; quote a prompt with spaces: --prompt "..."`);
  const timeout = timeoutOf(values.timeout);
  const wait = values.wait || values.out !== undefined || timeout !== undefined;
  const client = ctx.client(values, true);
  const body = await buildBody(values, readStdin, async (file) => (await uploadFile(client, file)).image_url);
  const opts = {
    ...(values['webhook-url'] !== undefined ? { webhookUrl: values['webhook-url'] } : {}),
    ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
    ...(values.tag ? { tags: values.tag } : {}),
  };
  try {
    if (!wait) {
      const job = await client.generate(model, body, opts);
      ctx.stdout.write(values.json ? `${JSON.stringify(job, null, 2)}\n` : `${job.job_id}\n`);
      return EXIT.ok;
    }
    return await waitWithProgress(ctx, values, (onUpdate, signal) => client.generate(model, body, { ...opts, wait: timeout ?? true, onUpdate, signal }));
  } catch (err) {
    // A 404 here is the POST's (a 404 once the job is known ends the wait as deleted): no such model.
    throw await unknownModel(err, client, model, 'mediagen generate {} ...');
  }
}

export const WAIT_HELP = `Usage: mediagen jobs wait ID [--timeout SECONDS] [--out DIR] [--json] [-q]

Follows a job to its end as 'mediagen generate --wait' does (same output and exit status).
`;

export async function waitCommand(ctx: ClientContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { ...CONNECTION_OPTIONS, ...WAIT_OPTIONS }, strict: true, allowPositionals: true });
  if (values.help) return help(ctx, WAIT_HELP);
  const id = onlyId(positionals, 'jobs wait');
  const timeout = timeoutOf(values.timeout);
  const client: Mediagen = ctx.client(values, true);
  return waitWithProgress(ctx, values, (onUpdate, signal) =>
    client.jobs.wait(id, { ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}), onUpdate, signal }),
  );
}

/** The one ID argument of a command. */
export function onlyId(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`mediagen ${command} takes one job or asset ID, got ${positionals.length}`);
  return positionals[0]!;
}
