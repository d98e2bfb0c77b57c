/**
 * `mediagen/client`: the typed client of the mediagen API (docs/clients.md).
 *
 *   import { Mediagen } from 'mediagen/client';
 *   const mg = new Mediagen({ baseUrl: 'http://localhost:8080', token: process.env.MEDIAGEN_TOKEN });
 *   const job = await mg.generate('image/vendor-a/model-a-2/medium', { prompt: 'a fox', aspect_ratio: '1:1', resolution: '1K' }, { wait: true });
 *
 * Browser-safe: nothing here imports a Node module (test/client/browser-safe.test.ts).
 */
export { Mediagen, Jobs, Assets, Models, Styles, NodeApps } from './client.js';
export { WorkspaceApi, Tokens, Webhooks } from './workspace-api.js';
export type { MediagenOptions, GenerateOptions, CreateOptions, UploadOptions, RequestOptions } from './client.js';
export { MediagenError, MediagenNetworkError } from './errors.js';
export type { RetryOptions } from './http.js';
export type { WaitOptions, WatchOptions } from './watch.js';
export { SseParser } from './sse.js';
export type { SseEvent } from './sse.js';
export { TERMINAL_STATUSES, isTerminal, outputUrls } from './types.js';
export type {
  ApiToken,
  Asset,
  AssetListQuery,
  AssetPage,
  CreatedApiToken,
  ApiTokenLimits,
  CreatedJob,
  DeletedAsset,
  DeletedJob,
  GenerateBody,
  Job,
  JobDetails,
  JobError,
  JobListQuery,
  JobPage,
  JobResult,
  JobStatus,
  Model,
  ModelPath,
  NodeAppInputs,
  PriceQuote,
  QuoteBody,
  RetiredModelError,
  StyleTrainingRequest,
  UsageGroup,
  UsageGrouping,
  UsageItem,
  UsagePage,
  UsageQuery,
  UsageSummary,
  UsageSummaryQuery,
  UsageTotal,
  WebhookDeliveryPage,
  WebhookDeliveryQuery,
  WebhookSecret,
  WorkspaceInfo,
  WebhookDelivery,
  WorkspaceWebhookDelivery,
} from './types.js';
export type { components, paths } from './generated/openapi.js';
