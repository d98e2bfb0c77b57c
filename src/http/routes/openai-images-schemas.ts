import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../models/schema-kit.js';

/**
 * The Images API's request and response as OpenAI's reference gives them (openai-node
 * src/resources/images.ts, ImageGenerateParams / ImageEditParams / ImagesResponse), for the
 * OpenAPI document. The use case checks requests itself (services/openai/openai-image-request.ts),
 * naming `param` as OpenAI's errors do.
 */
const A2 = 'image/vendor-a/model-a-2/medium';

const common = {
  prompt: Type.String({ minLength: 1, maxLength: 32000, description: 'What to make', examples: ['A lighthouse at dusk, oil painting'] }),
  model: Type.Optional(
    Type.String({ description: "A catalog model id or an alias of the config's `openai.models`; absent: `openai.default_image_model`, else the first image model taking a prompt alone", examples: [A2] }),
  ),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 1, description: "Images to make: the model's count field where it has one, else that many jobs" })),
  size: Type.Optional(
    Type.String({ description: '`WxH` or `auto`: width/height where the model has them, else its nearest aspect ratio and resolution', examples: ['1536x1024'] }),
  ),
  quality: Type.Optional(StringEnum(['standard', 'hd', 'low', 'medium', 'high', 'auto'], { description: "The model's `quality` field; `auto` and `standard` ask nothing" })),
  response_format: Type.Optional(StringEnum(['url', 'b64_json'], { default: 'url', description: "`url`: this server's output URL; `b64_json`: the file, base64" })),
  output_format: Type.Optional(StringEnum(['png', 'jpeg', 'webp'], { description: "The model's `output_format` field; a model without one refuses it" })),
  output_compression: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: "The model's `output_compression` field" })),
  background: Type.Optional(StringEnum(['transparent', 'opaque', 'auto'], { description: "The model's `background` field; `auto` asks nothing" })),
  user: Type.Optional(Type.String({ maxLength: 512, description: 'Accepted and ignored' })),
  stream: Type.Optional(Type.Literal(false, { description: 'Streaming is not supported' })),
  partial_images: Type.Optional(Type.Literal(0, { description: 'Needs streaming: only 0' })),
};

export const ImageGenerationBody = Type.Object(
  {
    ...common,
    moderation: Type.Optional(StringEnum(['low', 'auto'], { description: 'Accepted; this server filters nothing' })),
    style: Type.Optional(Type.String({ description: "The model's `style` field (a value it offers)" })),
  },
  { additionalProperties: false, description: 'POST /v1/images/generations', examples: [{ model: A2, prompt: 'A lighthouse at dusk', n: 2, size: '1536x1024' }] },
);

export const ImageEditForm = Type.Object(
  {
    image: Type.String({ format: 'binary', description: 'The image to edit (PNG, JPEG or WebP); several as `image[]` (at most 16). Kept as an asset' }),
    mask: Type.Optional(Type.String({ format: 'binary', description: "A mask: only for a model with a mask input (400 otherwise)" })),
    ...common,
    input_fidelity: Type.Optional(Type.Literal('low', { description: 'Only `low` (the default)' })),
  },
  { description: 'multipart/form-data, as OpenAI\'s SDKs send it' },
);

const ImageItem = Type.Union([
  Type.Object({ url: Type.String({ format: 'uri', description: "The output's URL on this server (as a job's result.urls)" }) }),
  Type.Object({ b64_json: Type.String({ description: 'The output file, base64' }) }),
]);

export const ImagesResponse = Type.Object(
  {
    created: Type.Integer({ description: 'Unix seconds', examples: [1796169600] }),
    data: Type.Array(ImageItem, { description: 'One item per image, in job order', examples: [[{ url: 'https://mediagen.example/outputs/0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69/image-1.png' }]] }),
    output_format: Type.Optional(StringEnum(['png', 'jpeg', 'webp'], { description: 'The format of the images, read from the first file', examples: ['png'] })),
    size: Type.Optional(Type.String({ description: 'WxH of the first image, read from its header', examples: ['1536x1024'] })),
  },
  {
    $id: 'OpenAiImagesResponse',
    description: "OpenAI's ImagesResponse (no token `usage`: nothing here counts tokens)",
    examples: [{ created: 1796169600, data: [{ url: 'https://mediagen.example/outputs/0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69/image-1.png' }], output_format: 'png', size: '1536x1024' }],
  },
);
