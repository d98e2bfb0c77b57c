import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';

/** What a prompt is: its listing, and its messages for the arguments given (strings, per MCP). */
export interface McpPrompt {
  readonly definition: Prompt;
  messages(args: Readonly<Record<string, string>>): GetPromptResult;
}

const IMAGE_MODEL = 'image/vendor-a/model-a-2/medium';
const VIDEO_MODEL = 'video/vendor-d/model-d-fast';

const imageThenVideo: McpPrompt = {
  definition: {
    name: 'image_then_video',
    title: 'Generate an image, then a video from it',
    description: 'Makes a still image of a subject, then animates it: the image becomes the first frame of a video.',
    arguments: [
      { name: 'subject', description: 'What the image shows and the video animates', required: true },
      { name: 'motion', description: 'What happens in the video (default: subtle natural motion)', required: false },
      { name: 'image_model', description: `The image model (default ${IMAGE_MODEL})`, required: false },
      { name: 'video_model', description: `A video model that starts from an image (default ${VIDEO_MODEL})`, required: false },
    ],
  },
  messages(args) {
    const subject = args.subject?.trim();
    if (!subject) throw new McpError(ErrorCode.InvalidParams, "the prompt needs 'subject'");
    const imageModel = args.image_model || IMAGE_MODEL;
    const videoModel = args.video_model || VIDEO_MODEL;
    const motion = args.motion?.trim() || 'subtle, natural motion';
    const text = [
      `Make an image of ${subject}, then a video that starts from it, with the mediagen tools:`,
      `1. Call get_model_schema for ${imageModel} and ${videoModel} to see which input fields each takes.`,
      `2. Call generate with model "${imageModel}", an input whose prompt describes ${subject}, and wait_seconds 60.`,
      '3. If the job is not completed yet, call get_job with its job_id until it is completed or failed.',
      `4. Take the image URL from result.urls[0] and call generate with model "${videoModel}", an input whose prompt describes ` +
        `${subject} with ${motion}, and the image URL in the schema's start-image field (start_image on most video models), with wait_seconds 60.`,
      '5. Poll get_job the same way, then show me both result URLs.',
      'If a call fails, read its error: it says what to change (a field, the balance, a retired model and its replacement).',
    ].join('\n');
    return {
      description: `An image of ${subject}, then a video from it`,
      messages: [{ role: 'user', content: { type: 'text', text } }],
    };
  },
};

/** Every prompt, in the order prompts/list shows them. */
export const PROMPTS: readonly McpPrompt[] = [imageThenVideo];
