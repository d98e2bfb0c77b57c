import type { McpTool } from '../tool.js';
import { deleteJob } from './delete-job.js';
import { generate } from './generate.js';
import { getJob } from './get-job.js';
import { getModelSchema } from './get-model-schema.js';
import { getUsage } from './get-usage.js';
import { listAssets } from './list-assets.js';
import { listJobs } from './list-jobs.js';
import { listModels } from './list-models.js';
import { uploadAsset } from './upload-asset.js';

/**
 * Every tool, in the order tools/list shows them. Adding a tool is one module exporting
 * `defineTool({...})` and one line here (list_styles, train_style and execute_node_app go the
 * same way once their use cases exist).
 */
export const TOOLS: readonly McpTool[] = [listModels, getModelSchema, generate, getJob, listJobs, deleteJob, uploadAsset, listAssets, getUsage];
