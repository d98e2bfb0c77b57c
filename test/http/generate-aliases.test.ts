import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2_LARGE, A2_MEDIUM, A2_TURBO, B1, C_EDIT, D_FAST, E1, F, MINIMAL, STYLE_1, accept, openGen, reject } from './generate-support.js';
import type { Gen } from './generate-support.js';

/**
 * Spec 4.2 and 9: deprecated camelCase aliases are accepted (and stored under the snake_case name)
 * until 2026-06-19, and refused naming the snake_case field from 2026-06-19T00:00:00Z on.
 */

const BEFORE_SUNSET = '2026-06-18T23:59:59.999Z';
const AT_SUNSET = '2026-06-19T00:00:00Z';

interface AliasCase {
  readonly path: string;
  readonly alias: string;
  readonly field: string;
  readonly value: unknown;
  /** What is stored under `field`, when defaults are filled in inside the value. */
  readonly stored?: unknown;
}

const a2 = (path: string): AliasCase[] => [
  { path, alias: 'presetStyles', field: 'styles', value: [{ id: STYLE_1, strength: 1.5 }] },
  {
    path,
    alias: 'imageStyleRefs',
    field: 'image_style_references',
    value: [{ url: 'https://example.com/ref.png' }],
    stored: [{ url: 'https://example.com/ref.png', strength: 0.5 }],
  },
];

const ALIASES: AliasCase[] = [
  ...a2(A2_MEDIUM),
  ...a2(A2_LARGE),
  ...a2(A2_TURBO),
  { path: B1, alias: 'outputFormat', field: 'output_format', value: 'jpeg' },
  { path: B1, alias: 'webSearch', field: 'web_search', value: true },
  { path: B1, alias: 'styleImages', field: 'style_images', value: [{ url: 'https://example.com/s.png' }] },
  { path: D_FAST, alias: 'startImage', field: 'start_image', value: 'https://example.com/start.png' },
  { path: D_FAST, alias: 'aspectRatio', field: 'aspect_ratio', value: '9:16' },
  { path: D_FAST, alias: 'generateAudio', field: 'generate_audio', value: true },
  { path: E1, alias: 'startImage', field: 'start_image', value: 'https://example.com/start.png' },
  { path: E1, alias: 'aspectRatio', field: 'aspect_ratio', value: '1:1' },
  { path: E1, alias: 'cameraControl', field: 'camera_control', value: { type: 'simple' } },
  { path: E1, alias: 'endImage', field: 'end_image', value: 'https://example.com/end.png' },
  { path: F, alias: 'startImage', field: 'start_image', value: 'https://example.com/start.png' },
  { path: F, alias: 'expandPrompt', field: 'expand_prompt', value: false },
];

describe('deprecated aliases before 2026-06-19', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen({ now: BEFORE_SUNSET });
  });
  afterAll(() => g.t.close());

  it.each(ALIASES)('$path accepts $alias and stores it as $field', async (c) => {
    const { stored } = await accept(g, c.path, { ...MINIMAL[c.path], [c.alias]: c.value });
    expect(stored.request[c.field]).toEqual(c.stored ?? c.value);
    expect(stored.request).not.toHaveProperty(c.alias);
  });

  it.each(ALIASES)('$path refuses $alias sent together with $field', async (c) => {
    const msg = await reject(g, c.path, { ...MINIMAL[c.path], [c.alias]: c.value, [c.field]: c.value }, c.field);
    expect(msg).toContain(c.alias);
  });

  it('accepts several aliases in one body and stores them all under their fields', async () => {
    const { stored } = await accept(g, E1, {
      ...MINIMAL[E1],
      startImage: 'https://example.com/s.png',
      aspectRatio: '9:16',
      cameraControl: { a: 1 },
      endImage: 'https://example.com/e.png',
    });
    expect(stored.request).toEqual({
      ...MINIMAL[E1],
      start_image: 'https://example.com/s.png',
      aspect_ratio: '9:16',
      camera_control: { a: 1 },
      end_image: 'https://example.com/e.png',
      duration: 5,
      mode: 'std',
    });
  });

  it('validates an aliased value like the field it stands for, naming the snake_case field', async () => {
    await reject(g, D_FAST, { ...MINIMAL[D_FAST], aspectRatio: '4:3' }, 'aspect_ratio');
    await reject(g, D_FAST, { ...MINIMAL[D_FAST], generateAudio: 'yes' }, 'generate_audio');
    await reject(g, A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], presetStyles: [{ id: 's', strength: 9 }] }, 'styles[0].strength');
    await reject(g, A2_MEDIUM, { ...MINIMAL[A2_MEDIUM], imageStyleRefs: Array(11).fill({ url: 'https://e.com/a' }) }, 'image_style_references');
  });

  it('fills defaults around an alias that replaces a defaulted field (aspectRatio keeps duration 8)', async () => {
    const { stored } = await accept(g, D_FAST, { ...MINIMAL[D_FAST], aspectRatio: '1:1' });
    expect(stored.request).toEqual({ ...MINIMAL[D_FAST], aspect_ratio: '1:1', duration: 8, generate_audio: false, resolution: '720p' });
  });

  it.each([
    [B1, 'presetStyles'],
    [A2_MEDIUM, 'startImage'],
    [C_EDIT, 'startImage'],
    [C_EDIT, 'initVideo'],
    [F, 'aspectRatio'],
    [D_FAST, 'expandPrompt'],
  ])('%s does not accept %s, an alias it never had', async (path, alias) => {
    await reject(g, path, { ...MINIMAL[path], [alias]: 'x' }, alias);
  });
});

describe('deprecated aliases from 2026-06-19T00:00:00Z', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen({ now: BEFORE_SUNSET });
  });
  afterAll(() => g.t.close());

  it('switch from accepted to refused at the exact instant of the sunset', async () => {
    g.t.clock.set(BEFORE_SUNSET);
    await accept(g, F, { ...MINIMAL[F], expandPrompt: false });
    g.t.clock.set(AT_SUNSET);
    await reject(g, F, { ...MINIMAL[F], expandPrompt: false }, 'expand_prompt');
  });

  it.each(ALIASES)('$path refuses $alias at the sunset instant, naming $field', async (c) => {
    g.t.clock.set(AT_SUNSET);
    await reject(g, c.path, { ...MINIMAL[c.path], [c.alias]: c.value }, c.field);
  });

  it('the snake_case fields keep working after the sunset', async () => {
    g.t.clock.set(AT_SUNSET);
    const { stored } = await accept(g, F, { ...MINIMAL[F], start_image: 'https://example.com/s.png', expand_prompt: false });
    expect(stored.request).toEqual({ ...MINIMAL[F], start_image: 'https://example.com/s.png', expand_prompt: false });
  });
});

describe('deprecated aliases with the default clock (2026-11-22)', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  it.each(ALIASES)('$path refuses $alias with 400 naming $field', async (c) => {
    await reject(g, c.path, { ...MINIMAL[c.path], [c.alias]: c.value }, c.field);
  });

  it('refuses an alias even when sent with its snake_case field, naming the field', async () => {
    await reject(g, D_FAST, { ...MINIMAL[D_FAST], aspectRatio: '1:1', aspect_ratio: '1:1' }, 'aspect_ratio');
  });
});
