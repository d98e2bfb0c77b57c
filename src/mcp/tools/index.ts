import type { McpTool } from '../tool.js';
import { deleteJob } from './delete-job.js';
import { executeNodeApp } from './execute-node-app.js';
import { generate } from './generate.js';
import { getJob } from './get-job.js';
import { getModelSchema } from './get-model-schema.js';
import { getStyle } from './get-style.js';
import { getUsage } from './get-usage.js';
import { listAssets } from './list-assets.js';
import { listJobs } from './list-jobs.js';
import { listModels } from './list-models.js';
import { listStyles } from './list-styles.js';
import { quotePrice } from './quote-price.js';
import { trainStyle } from './train-style.js';
import { uploadAsset } from './upload-asset.js';

/**
 * Every tool, in the order tools/list shows them. Adding a tool is one module exporting
 * `defineTool({...})` and one line here.
 */
export const TOOLS: readonly McpTool[] = [
  listModels,
  getModelSchema,
  quotePrice,
  generate,
  getJob,
  listJobs,
  deleteJob,
  uploadAsset,
  listAssets,
  trainStyle,
  listStyles,
  getStyle,
  executeNodeApp,
  getUsage,
];
