import type { OpenAiSettings } from '../../config/openai-settings.js';
import type { Clock } from '../../lib/clock.js';
import type { Catalog } from '../../models/catalog.js';
import type { OutputStore } from '../../outputs/output-store.js';
import type { AssetService } from '../assets/assets.js';
import type { GenerationService } from '../jobs/generation.js';
import type { JobService } from '../jobs/jobs.js';
import type { JobWaits } from '../jobs/job-waits.js';
import { OpenAiImages } from './openai-images.js';
import { OpenAiEdits } from './openai-edits.js';
import { OpenAiModels } from './openai-models.js';
import { OpenAiVideos } from './openai-videos.js';
import type { Store } from '../../store/store.js';
import type { VideoViewContext } from './openai-video-view.js';

/** What the OpenAI-compatible door is made of: native use cases, nothing of its own underneath. */
export interface OpenAiDoorDeps {
  readonly catalog: Catalog;
  readonly clock: Clock;
  readonly settings: OpenAiSettings;
  readonly generation: GenerationService;
  readonly jobs: JobService;
  readonly waits: JobWaits;
  readonly assets: AssetService;
  readonly outputs: OutputStore;
  /** The videos read a job's request and progress, which the job service's view leaves out. */
  readonly store: Store;
  /** Days a finished job's files are served (a video's `expires_at`). */
  readonly retention: VideoViewContext['retention'];
}

/** The /v1 use cases (docs/openai.md); each door (images, models, videos) adds its member here. */
export interface OpenAiDoor {
  readonly models: OpenAiModels;
  readonly images: OpenAiImages;
  /** Edits: uploads become assets of the caller's workspace, as POST /assets makes them. */
  readonly edits: OpenAiEdits;
  /** Stages an edit's uploads as they stream in (the transport reads the form). */
  readonly assets: AssetService;
  /** OpenAI's Videos API over the native video jobs. */
  readonly videos: OpenAiVideos;
}

export function createOpenAiDoor(deps: OpenAiDoorDeps): OpenAiDoor {
  const models = new OpenAiModels(deps.catalog, deps.clock, deps.settings);
  const images = new OpenAiImages({ models, generation: deps.generation, jobs: deps.jobs, waits: deps.waits, outputs: deps.outputs, clock: deps.clock });
  const videos = new OpenAiVideos({ ...deps, models, retention: deps.retention });
  return { models, images, edits: new OpenAiEdits(images, deps.assets), assets: deps.assets, videos };
}
