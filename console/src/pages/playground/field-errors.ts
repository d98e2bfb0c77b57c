/**
 * Which field of a request an API refusal names, so the playground shows it beside that field.
 * Pure (no DOM, no Preact): test/console/playground-logic.test.ts runs it in Node.
 *
 * The API's 400s name their field at the start (src/models/validation.ts and the models' own
 * checks, src/services/assets/asset-inputs.ts, src/models/private-urls.ts):
 *
 *   'width' must be <= 8192
 *   'styles[0].strength' must be <= 2
 *   'output_format' must be one of "png", "jpeg" or null
 *   missing required property 'prompt'          unknown property 'foo'
 *   'width' x 'height' must be at most 64,000,000 pixels (64 megapixels); ...
 *   'upscale_factor' and 'resolution' cannot be given together; give one of them
 *   'learning_rate' is not taken when 'model' is qwen; ...
 *   image_url refused: localhost is a loopback name; ...
 *   image_style_references[0].url names an asset that was deleted; upload the file again
 *
 * and Fastify's own schema messages name the body's path: `body/width must be <= 2048`,
 * `body must have required property 'prompt'`.
 */

/** A field path as the API writes it: `width`, `styles[0].strength`, `image_style_references[2].url`. */
const PATH = String.raw`[A-Za-z_$][\w$-]*(?:\[\d+\])*(?:\.[A-Za-z_$][\w$-]*(?:\[\d+\])*)*`;

const QUOTED_LEAD = new RegExp(String.raw`^'(${PATH})'((?:\s+(?:x|and|or)\s+'${PATH}')*)`);
const QUOTED = new RegExp(String.raw`'(${PATH})'`, 'g');
const MISSING = new RegExp(String.raw`^(?:missing required property|unknown property) '(${PATH})'`);
const AJV_REQUIRED = new RegExp(String.raw`^body(?:[/.](\S+))? must have required property '(${PATH})'`);
const AJV_PATH = /^\/?body[/.](\S+)\s/;
const BARE_LEAD = new RegExp(String.raw`^(${PATH})(?::|\s+(?:refused|names|must|is|are|cannot|should)\b)`);

/** `/styles/0/strength` or `styles.0.strength` as `styles[0].strength`. */
function fromPointer(pointer: string): string {
  return pointer
    .split(/[/.]/)
    .filter(Boolean)
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

/**
 * The field paths a refusal names at its start, in its order: `['width']`, `['styles[0].strength']`,
 * `['width', 'height']`; empty when it names none (the message then belongs to the whole form).
 * Names quoted later in a sentence ("when 'model' is qwen") are the circumstance, not the fault.
 */
export function errorFieldPaths(message: string): string[] {
  // A node-app step's refusals are prefixed with the step; the rest is a model's refusal.
  const m = message.trim().replace(/^step '[^']*':\s*/, '');
  const missing = MISSING.exec(m);
  if (missing) return [missing[1]!];
  const ajvRequired = AJV_REQUIRED.exec(m);
  if (ajvRequired) return [fromPointer(`${ajvRequired[1] ?? ''}/${ajvRequired[2]!}`)];
  const lead = QUOTED_LEAD.exec(m);
  if (lead) return [lead[1]!, ...[...(lead[2] ?? '').matchAll(QUOTED)].map((q) => q[1]!)];
  const ajv = AJV_PATH.exec(m);
  if (ajv) return [fromPointer(ajv[1]!)];
  const bare = BARE_LEAD.exec(m);
  // "the request body must be a JSON object" names no field.
  if (bare && bare[1] !== 'the') return [bare[1]!];
  return [];
}

/** The top-level property of a path: `styles[0].strength` is `styles`. */
export function topField(path: string): string {
  return /^[^.[]+/.exec(path)?.[0] ?? path;
}

/**
 * The top-level fields of the form a refusal names, among `known` (the form's fields), without
 * repeats. A name the form does not have (`unknown property 'foo'`) gives none: the message then
 * goes above the submit button.
 */
export function errorFields(message: string, known: Iterable<string>): string[] {
  const names = new Set(known);
  return [...new Set(errorFieldPaths(message).map(topField))].filter((f) => names.has(f));
}
