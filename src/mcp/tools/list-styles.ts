import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../models/schema-kit.js';
import { BASE_MODELS } from '../../models/style/lora-training.js';
import { StylePage } from '../../services/styles/style-view.js';
import { defineTool } from '../tool.js';
import { Cursor, Limit, micros } from './list-jobs.js';

export const StyleId = Type.String({ description: 'A style identifier (UUID), as list_styles or a training job\'s result.style_id gives it', examples: ['8d1f3a52-6c0e-4b7a-9f21-3e5d7c9b1a40'] });

export const listStyles = defineTool({
  name: 'list_styles',
  title: 'List styles',
  description:
    "The styles (LoRAs) your token may use in its workspace, newest first, a page at a time (pass next_cursor back as cursor): your own " +
    "and those shared with the workspace. Use a style's `id` in `styles: [{id, strength}]` of a generate input (model-a-2); train new " +
    'ones with train_style.',
  input: Type.Object(
    {
      limit: Type.Optional(Limit),
      cursor: Type.Optional(Cursor('styles created')),
      ids: Type.Optional(Type.Array(StyleId, { minItems: 1, maxItems: 1000, description: 'Only these styles' })),
      model: Type.Optional(StringEnum(BASE_MODELS, { description: 'Only styles trained for this base model' })),
      filter: Type.Optional(
        StringEnum(['all', 'user', 'shared'], {
          default: 'all',
          description: 'user: trained with your tokens\' member; shared: shared with the workspace by other members; all: both',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  output: StylePage,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    const page = await deps.styles.list(
      ctx.caller,
      {
        limit: input.limit ?? 100,
        before: micros(input.cursor, 'cursor'),
        ...(input.ids ? { ids: input.ids } : {}),
        ...(input.model ? { model: input.model } : {}),
        filter: input.filter ?? 'all',
      },
      ctx.publicUrl,
    );
    return { structured: page };
  },
});
