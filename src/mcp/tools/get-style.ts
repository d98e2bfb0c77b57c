import { Type } from '@sinclair/typebox';
import { Style } from '../../services/styles/style-view.js';
import { defineTool } from '../tool.js';
import { StyleId } from './list-styles.js';

export const getStyle = defineTool({
  name: 'get_style',
  title: 'Get a style',
  description:
    'One style by id, as GET /styles/{id} shows it: your own, one shared with your workspace, or a public style of any workspace ' +
    '(which list_styles does not list). Any other id is not found.',
  input: Type.Object({ style_id: StyleId }, { additionalProperties: false }),
  output: Style,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(deps, input, ctx) {
    return { structured: await deps.styles.get(ctx.caller, input.style_id, ctx.publicUrl) };
  },
});
