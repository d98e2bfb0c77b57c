import type { FastifyInstance } from 'fastify';
import { registerOpenAiScope } from '../plugins/openai-errors.js';
import { registerOpenAiImageRoutes } from './openai-images-routes.js';
import type { OpenAiImagesDeps } from './openai-images-routes.js';
import { registerOpenAiModelRoutes } from './openai-models-routes.js';
import { registerOpenAiVideoRoutes } from './openai-videos-routes.js';

/** What the /v1 routes are given: the door's use cases and what creating routes share. */
export type OpenAiRouteDeps = OpenAiImagesDeps;

/**
 * The OpenAI-compatible door (docs/openai.md): every /v1 route, in one scope whose errors are in
 * OpenAI's shape. Each door (images, models, videos) adds its line here.
 */
export async function registerOpenAiRoutes(app: FastifyInstance, deps: OpenAiRouteDeps): Promise<void> {
  await registerOpenAiScope(app, (scope) => {
    registerOpenAiModelRoutes(scope, deps.door.models);
    registerOpenAiImageRoutes(scope, deps);
    return registerOpenAiVideoRoutes(scope, { videos: deps.door.videos, assets: deps.door.assets, publicUrl: deps.publicUrl, allowPrivateUrls: deps.allowPrivateUrls, bodyLimitBytes: deps.bodyLimitBytes });
  });
}
