import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { invalid } from '../../domain/error-catalogue.js';
import { presentJob } from '../../services/common/job-view.js';
import { HEARTBEAT_MS, STREAMS_PER_PROCESS, STREAMS_PER_WORKSPACE } from '../../services/jobs/job-waits.js';
import type { JobStreamEvent } from '../../services/jobs/job-waits.js';
import type { Services } from '../../services/services.js';
import type { Held, HeldRequests } from '../request/held-requests.js';
import { requireAuth } from '../plugins/auth.js';
import { headerValues } from '../request/request-headers.js';
import { ErrorBody, errorResponses } from '../openapi/common-schemas.js';

export interface JobEventDeps extends Pick<Services, 'waits'> {
  readonly held: HeldRequests;
  readonly publicUrl: () => string;
}

/**
 * The `retry:` of the final `reconnect` event of a server closing: long enough for a load balancer
 * to have taken the process out (its readiness fails from SIGTERM on), short enough not to be noticed.
 */
export const RECONNECT_RETRY_MS = 1000;

/**
 * The last words of a stream cut by the server's shutdown: not the job's end. No `id:`, so the
 * client's Last-Event-ID stays the last status it got; data, so an EventSource dispatches it.
 */
const RECONNECT_EVENT = `retry: ${RECONNECT_RETRY_MS}\nevent: reconnect\ndata: {"reason":"server_closing"}\n\n`;

/** A transition id: what `id:` carried, sent back as Last-Event-ID. */
const EVENT_ID = /^\d{1,15}$/;

const IdParam = Type.Object({
  id: Type.String({ description: 'Job identifier (UUID)', examples: ['0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69'] }),
});

const DESCRIPTION =
  "The job's status changes as Server-Sent Events (`text/event-stream`), from its creation or from after `Last-Event-ID`, " +
  'then live, wherever the job runs. Each change is `id: <transition id>`, `event: status`, `data: <the job as GET /jobs/{id} ' +
  'shows it>`; the terminal status comes as `event: end`, and the stream closes after it. A status the job had already ' +
  'left when it is sent (catching up) carries the job without `result`, `error` and `completed_at`. A job deleted while ' +
  'streaming sends `event: deleted` with `data: {"id": "<job id>"}` and closes. A server shutting down ends the stream with ' +
  `\`retry: ${RECONNECT_RETRY_MS}\`, \`event: reconnect\`, \`data: {"reason": "server_closing"}\`: not the job's end; reconnect with ` +
  'Last-Event-ID (another server process answers). The stream opens with the comment `: ping` and ' +
  `repeats it after ${HEARTBEAT_MS / 1000} s without an event. Reconnect with the last id received as Last-Event-ID (or ` +
  '`?last_event_id=`; the header wins) to resume without loss or repeats; resuming a job that had ended by then answers 204. ' +
  `At most ${STREAMS_PER_WORKSPACE} streams per workspace, and ${STREAMS_PER_PROCESS} in all, are open on one server process (then 429).`;

/** GET /jobs/{id}/events: the job's status changes as Server-Sent Events (docs/clients.md). */
export function registerJobEventsRoute(app: FastifyInstance, deps: JobEventDeps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/jobs/:id/events',
    {
      schema: {
        operationId: 'streamJobEvents',
        summary: "Stream a job's status changes (Server-Sent Events)",
        description: DESCRIPTION,
        tags: ['jobs'],
        params: IdParam,
        headers: Type.Object({
          'last-event-id': Type.Optional(Type.String({ pattern: EVENT_ID.source, description: 'Resume after this event id (a transition id)', examples: ['42'] })),
        }),
        querystring: Type.Object({
          last_event_id: Type.Optional(
            Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Resume after this event id, for clients that cannot send Last-Event-ID', examples: [42] }),
          ),
        }),
        response: {
          200: {
            description: 'The event stream: `status` events, then `end` (or `deleted`, or `reconnect` when the server shuts down), then the stream closes',
            content: {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: 'Server-Sent Events',
                  examples: ['id: 7\nevent: status\ndata: {"job_id":"0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69","type":"image/vendor-a/model-a-2/medium","status":"queued","created_at":"2026-11-22T12:00:00.000000Z"}\n\n'],
                },
              },
            },
          },
          204: { description: 'The job had ended at or before Last-Event-ID: nothing will follow (an EventSource stops reconnecting)', type: 'null' },
          ...errorResponses(400, 404),
          429: {
            ...ErrorBody,
            description: `The workspace has ${STREAMS_PER_WORKSPACE} event streams open on this server (or the server ${STREAMS_PER_PROCESS} in all); retry after \`Retry-After\` seconds or poll`,
            headers: { 'retry-after': { type: 'string', pattern: '^[0-9]+$', description: 'Seconds to wait before retrying', examples: ['5'] } },
          },
        },
      },
    },
    async (request, reply) => {
      const afterId = lastEventId(request.raw.rawHeaders, request.query.last_event_id);
      const held = deps.held.hold(reply);
      let events: AsyncGenerator<JobStreamEvent> | undefined;
      try {
        events = await deps.waits.stream(requireAuth(request.auth), request.params.id, afterId, held.signal);
      } catch (err) {
        held.release();
        throw err;
      }
      if (!events) {
        const closing = held.serverClosing;
        held.release();
        // Opened as the server began closing: not an ended job (204 would stop an EventSource for good).
        if (closing) return sendEvents(reply, Readable.from([RECONNECT_EVENT]));
        return reply.code(204).send();
      }
      const stream = events;
      const body = Readable.from(eventText(stream, deps.publicUrl, held));
      body.once('close', () => {
        held.release();
        // Closing the text does not reach `events` when it closes before its first event.
        void stream.return(undefined);
      });
      return sendEvents(reply, body);
    },
  );
}

function sendEvents(reply: FastifyReply, body: Readable): FastifyReply {
  // Proxies that buffer (nginx) pass each event on at once.
  return reply.code(200).header('content-type', 'text/event-stream; charset=utf-8').header('x-accel-buffering', 'no').send(body);
}

/** The resume point: Last-Event-ID (an EventSource sends it on reconnecting), else the query's, else 0. */
function lastEventId(rawHeaders: readonly string[], query: number | undefined): number {
  const sent = headerValues(rawHeaders, 'last-event-id');
  if (sent.length > 1) throw invalid('send the Last-Event-ID header at most once');
  const header = sent[0]?.trim();
  if (header === undefined || header === '') return query ?? 0;
  if (!EVENT_ID.test(header)) throw invalid(`Last-Event-ID must be an event id this stream sent (digits), got '${header.slice(0, 40)}'`);
  return Number(header);
}

/**
 * The stream's text: a comment at once (the headers go out with it), then each event; when the
 * server's shutdown cut it before the job's last word, `reconnect`.
 */
async function* eventText(events: AsyncGenerator<JobStreamEvent>, publicUrl: () => string, held: Held): AsyncGenerator<string> {
  yield ': ping\n\n';
  let last: JobStreamEvent['kind'] | undefined;
  for await (const e of events) {
    last = e.kind;
    if (e.kind === 'idle') yield ': ping\n\n';
    else if (e.kind === 'deleted') yield `event: deleted\ndata: ${JSON.stringify({ id: e.jobId })}\n\n`;
    else yield `id: ${e.id}\nevent: ${e.kind}\ndata: ${JSON.stringify(presentJob(e.job, publicUrl()))}\n\n`;
  }
  if (last !== 'end' && last !== 'deleted' && held.serverClosing) yield RECONNECT_EVENT;
}
