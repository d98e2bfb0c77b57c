import { Type } from '@sinclair/typebox';
import { AssetPage } from '../../services/assets/asset-view.js';
import { defineTool } from '../tool.js';
import { Cursor, Limit, micros } from './list-jobs.js';

export const listAssets = defineTool({
  name: 'list_assets',
  title: 'List assets',
  description: "Your workspace's uploaded files, newest first, a page at a time (pass next_cursor back as cursor). Each `image_url` can go in a generate input.",
  input: Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor('assets uploaded')) }, { additionalProperties: false }),
  output: AssetPage,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    return { structured: await deps.assets.list(ctx.caller, { limit: input.limit ?? 100, before: micros(input.cursor, 'cursor') }, ctx.publicUrl) };
  },
});
