import { Type } from '@sinclair/typebox';
import { ModelDeprecation, ModelView } from '../../services/catalog/models.js';
import { defineTool } from '../tool.js';

export const ModelId = Type.String({
  minLength: 1,
  description: 'A model id as list_models gives it, e.g. image/vendor-a/model-a-2/medium',
  examples: ['image/vendor-a/model-a-2/medium'],
});

/** A model's request body, as generate and quote_price take it. */
export const ModelInput = Type.Record(Type.String(), Type.Unknown(), {
  description: 'The request body, as get_model_schema describes it',
  examples: [{ prompt: 'a red fox in the snow', aspect_ratio: '1:1', resolution: '1K' }],
});

export const getModelSchema = defineTool({
  name: 'get_model_schema',
  title: 'Get a model\'s request schema',
  description:
    'The JSON Schema (draft-07) of the `input` that generate takes for one model: every field, its type, range, default and meaning. ' +
    'Unknown fields are refused, so read this before calling generate. A retired model has no schema (null).',
  input: Type.Object({ model: ModelId }, { additionalProperties: false }),
  output: Type.Object({
    id: ModelView.properties.id,
    available: ModelView.properties.available,
    request_schema: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'The JSON Schema generate validates `input` with (defaults are applied and stored with the job); null for a retired model',
    }),
    deprecation: Type.Optional(ModelDeprecation),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    const m = deps.models.get(input.model, ctx.publicUrl);
    return {
      structured: {
        id: m.id,
        available: m.available,
        request_schema: m.request_schema ?? null,
        ...(m.deprecation ? { deprecation: m.deprecation } : {}),
      },
    };
  },
});
