/**
 * The client's types, every one taken from the types openapi-typescript generates from the
 * server's OpenAPI document (scripts/client-types.ts writes ./generated/openapi.ts): no shape is
 * copied by hand, so a change to a route's schema shows up here at the next build.
 */
import type { components, paths } from './generated/openapi.js';

type Schemas = components['schemas'];

/** A job as `GET /jobs/{id}` shows it. */
export type Job = Schemas['Job'];
export type JobStatus = Job['status'];
export type JobResult = Schemas['JobResult'];
export type JobError = Schemas['JobError'];
export type JobPage = Schemas['JobPage'];
/** The answer of `POST /generate/...` without `Prefer: wait`: `completed_at` and `result` present and null. */
export type CreatedJob = Schemas['CreatedJob'];
export type DeletedJob = Schemas['DeletedJob'];
export type Model = Schemas['Model'];
export type Asset = Schemas['Asset'];
export type AssetPage = Schemas['AssetPage'];
export type DeletedAsset = Schemas['DeletedAsset'];
export type UsagePage = Schemas['UsagePage'];
export type UsageItem = Schemas['UsageItem'];
/** `GET /usage/summary`'s answer: the total and the groups, in integer micro-USD (`cost_micros`) and USD. */
export type UsageSummary = Schemas['UsageSummary'];
export type UsageGroup = Schemas['UsageGroup'];
export type UsageTotal = Schemas['UsageTotal'];
/** `POST /styles/train`'s body. */
export type StyleTrainingRequest = Schemas['StyleTrainingRequest'];
/** `POST /node-apps/{id}/execute`'s body: the inputs of the version, checked against its input schema. */
export type NodeAppInputs = Schemas['NodeAppInputs'];
/** The 410 body of a retired model. */
export type RetiredModelError = Schemas['Error410'];
/** `GET /jobs/{id}/details`: the job, its stored request, status history and billing. */
export type JobDetails = Schemas['JobDetails'];
/** `POST /models/{id}/quote`'s answer. */
export type PriceQuote = Schemas['PriceQuote'];
/** `GET /workspace`: the token's workspace, member and role, balance and limits. */
export type WorkspaceInfo = Schemas['Workspace'];
export type ApiToken = Schemas['ApiToken'];
/** `POST /tokens`'s answer: the token and, this once, its secret. */
export type CreatedApiToken = Schemas['CreatedApiToken'];
/** A new token's own limits (POST /tokens): spend per period, model patterns, jobs in flight. */
export type ApiTokenLimits = Omit<Schemas['ApiTokenRequest'], 'name'>;
export type WebhookSecret = Schemas['WebhookSecret'];
/** A delivery of `GET /webhook-deliveries`: a job's delivery log entry with its `job_id`. */
/** One webhook delivery of a job (`GET /jobs/{id}/webhook-deliveries`), with every attempt. */
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WorkspaceWebhookDelivery = Schemas['WorkspaceWebhookDelivery'];
export type WebhookDeliveryPage = Schemas['WebhookDeliveryPage'];

type QueryOf<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** `GET /jobs`'s query; `types` may also be given as a list. */
export type JobListQuery = Omit<QueryOf<paths['/jobs']['get']>, 'types'> & { types?: string | readonly string[] };
export type AssetListQuery = QueryOf<paths['/assets']['get']>;
/** `GET /usage`'s query: a time window (`start` inclusive, `end` exclusive) and paging. */
export type UsageQuery = QueryOf<paths['/usage']['get']>;
/** A grouping of `GET /usage/summary`: `'day'`, `'model'`, `'engine'` (owners and admins) or `'tag'`. */
export type UsageGrouping = NonNullable<QueryOf<paths['/usage/summary']['get']>['group_by']>[number];
/**
 * `GET /usage/summary`'s query: the same window, `group_by` (one grouping or several, as a list
 * or comma-separated: `['day', 'tag']`, `'day,tag'`) and `utc_offset` (where days start, such as
 * `'+01:00'`; default UTC).
 */
export type UsageSummaryQuery = Omit<QueryOf<paths['/usage/summary']['get']>, 'group_by'> & {
  group_by?: UsageGrouping | `${UsageGrouping},${string}` | readonly UsageGrouping[];
};
/** `GET /webhook-deliveries`'s query: paging. */
export type WebhookDeliveryQuery = QueryOf<paths['/webhook-deliveries']['get']>;

type GenerationRoute = Extract<keyof paths, `/generate/${string}`>;

/** Every model path the server had a `POST /generate/{path}` route for when the types were generated. */
export type ModelPath = GenerationRoute extends `/generate/${infer M}` ? M : never;

type JsonBodyOf<Route> = Route extends { post: { requestBody?: { content: { 'application/json': infer B } } } } ? B : never;

/**
 * A model's request body: the generated one for a known model path (a retired model has none),
 * any JSON object for a model these types do not know (a custom model of the server's config).
 */
export type GenerateBody<M extends string> = M extends ModelPath
  ? [JsonBodyOf<paths[`/generate/${M}`]>] extends [never]
    ? Record<string, unknown>
    : JsonBodyOf<paths[`/generate/${M}`]>
  : Record<string, unknown>;

/** The job type of style training, whose body is `POST /styles/train`'s. */
type StyleTraining = 'loraTraining';

/** What `models.quote` takes for `M`: its generation body, or the training body for style training. */
export type QuoteBody<M extends string> = M extends StyleTraining ? StyleTrainingRequest : GenerateBody<M>;

/** The statuses a job ends in. */
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];

export function isTerminal(status: string): status is (typeof TERMINAL_STATUSES)[number] {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/**
 * Every output URL of a job's `result`, main output first: `result.urls` is a list of URLs, a list
 * of `{type, url}` (a 3D model and its preview), or URLs by name. Empty while there is no result.
 */
export function outputUrls(job: Pick<Job, 'result'>): string[] {
  const urls: unknown = job.result?.urls;
  const items: unknown[] = Array.isArray(urls) ? urls : urls && typeof urls === 'object' ? Object.values(urls) : [];
  return items.flatMap((u) => {
    if (typeof u === 'string') return [u];
    const url = u && typeof u === 'object' ? (u as { url?: unknown }).url : undefined;
    return typeof url === 'string' ? [url] : [];
  });
}
