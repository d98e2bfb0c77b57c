import { describe, expect, it } from 'vitest';
import { GRAPH_LIMITS, GraphError, outputRef, parseGraph, refText, refsOf, stepLevels, substitute, wholeRef } from '../../src/domain/node-app-graph.js';
import type { NodeAppGraph } from '../../src/domain/node-app-graph.js';

const step = (id: string, input: Record<string, unknown> = {}, model = 'image/vendor-a/model-a-2/medium') => ({ id, model, input });
const graphOf = (steps: unknown[], outputs: Record<string, unknown> = { out: `{{steps.${(steps[0] as { id: string }).id}.urls[0]}}` }) => ({ steps, outputs });

const TWO_STEPS = {
  steps: [
    step('img', { prompt: '{{inputs.prompt}}', aspect_ratio: '16:9', resolution: '1K' }),
    step('vid', { start_image: '{{steps.img.urls[0]}}', prompt: 'Slow pan: {{ inputs.motion }}' }, 'video/vendor-e/model-e-1'),
  ],
  outputs: { image: '{{steps.img.urls[0]}}', video: '{{ steps.vid.urls[0] }}' },
};

/** The GraphError message parseGraph throws for `value`. */
function refusal(value: unknown): string {
  try {
    parseGraph(value);
  } catch (err) {
    expect(err).toBeInstanceOf(GraphError);
    return (err as Error).message;
  }
  throw new Error('parseGraph accepted the graph');
}

describe('parsing a graph', () => {
  it('keeps steps and outputs as given', () => {
    const g = parseGraph(TWO_STEPS);
    expect(g).toEqual(TWO_STEPS);
    expect(g.steps.map((s) => s.id)).toEqual(['img', 'vid']);
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', [], /^graph must be a JSON object with steps and outputs$/],
    ['null', null, /^graph must be a JSON object/],
    ['an unknown top-level key', { ...TWO_STEPS, inputs: {} }, /^graph: unknown key 'inputs'/],
    ['no steps', { steps: [], outputs: {} }, /^graph\.steps must be an array of 1 to 20 steps$/],
    ['too many steps', graphOf(Array.from({ length: 21 }, (_, i) => step(`s${i}`))), /^graph\.steps must be an array of 1 to 20 steps$/],
    ['a step that is not an object', graphOf(['img']), /^graph\.steps\[0\] must be an object with id, model and input$/],
    ['an unknown step key', graphOf([{ ...step('a'), after: 'b' }]), /^graph\.steps\[0\]: unknown key 'after'/],
    ['a bad step id', graphOf([step('Img')]), /^graph\.steps\[0\]\.id must match/],
    ['a step id used twice', graphOf([step('a'), step('a')]), /^graph\.steps\[1\]\.id: step 'a' is defined twice$/],
    ['an empty model', graphOf([step('a', {}, '')]), /^graph\.steps\[0\]\.model must be a model path$/],
    ['an input that is not an object', graphOf([{ id: 'a', model: 'm', input: 'x' }]), /^graph\.steps\[0\]\.input must be an object/],
    ['no outputs', graphOf([step('a')], {}), /^graph\.outputs must be an object of 1 to 20 named outputs$/],
    ['a bad output name', graphOf([step('a')], { '1st': '{{steps.a.urls[0]}}' }), /^graph\.outputs\.1st: an output name must match/],
    ['an output of an input', graphOf([step('a')], { out: '{{inputs.prompt}}' }), /^graph\.outputs\.out must be exactly one step reference/],
    ['an output with text around it', graphOf([step('a')], { out: 'see {{steps.a.urls[0]}}' }), /^graph\.outputs\.out must be exactly one step reference/],
    ['an output that is not a string', graphOf([step('a')], { out: 3 }), /^graph\.outputs\.out must be exactly one step reference/],
    ['an output of a missing step', graphOf([step('a')], { out: '{{steps.b.urls[0]}}' }), /^graph\.outputs\.out: no step 'b' in the graph$/],
    ['a reference to a missing step', graphOf([step('a', { image_url: '{{steps.nope.urls[0]}}' })]), /^graph\.steps\[0\]\.input\.image_url: no step 'nope' in the graph$/],
    ['a malformed reference', graphOf([step('a', { prompt: 'x {{input.prompt}}' })]), /^graph\.steps\[0\]\.input\.prompt: '\{\{input\.prompt\}\}' is not a reference; use/],
    ['a step reference without an index', graphOf([step('a'), step('b', { x: '{{steps.a.urls}}' })]), /^graph\.steps\[1\]\.input\.x: '\{\{steps\.a\.urls\}\}' is not a reference/],
    ['an empty reference', graphOf([step('a', { p: ['{{ }}'] })]), /^graph\.steps\[0\]\.input\.p\[0\]: '\{\{\}\}' is not a reference/],
  ])('refuses %s, naming where', (_, value, message) => {
    expect(refusal(value)).toMatch(message);
  });

  it('refuses more than GRAPH_LIMITS.refsMax references in a graph, and takes that many', () => {
    const refs = (n: number) => Array.from({ length: n }, () => '{{inputs.p}}').join(' ');
    // The output is one reference too.
    expect(() => parseGraph(graphOf([step('a', { prompt: refs(GRAPH_LIMITS.refsMax - 1) })]))).not.toThrow();
    expect(refusal(graphOf([step('a', { prompt: refs(GRAPH_LIMITS.refsMax) })]))).toBe(`graph: at most ${GRAPH_LIMITS.refsMax} references in a graph, found ${GRAPH_LIMITS.refsMax + 1}`);
  });

  it('refuses a step that refers to its own results', () => {
    expect(refusal(graphOf([step('a', { image_url: '{{steps.a.urls[0]}}' })]))).toBe("graph.steps: step 'a' refers to its own results");
  });

  it('names the steps of a cycle, not the steps that only lead into it', () => {
    const g = graphOf([
      step('lead', { image_url: '{{steps.b.urls[0]}}' }),
      step('b', { image_url: '{{steps.c.urls[0]}}' }),
      step('c', { image_url: '{{steps.d.urls[1]}}' }),
      step('d', { image_url: '{{steps.b.urls[0]}}' }),
      step('free'),
    ]);
    expect(refusal(g)).toBe("graph.steps: steps 'b' -> 'c' -> 'd' -> 'b' form a cycle of references");
  });

  it('keeps an output named __proto__ as an output', () => {
    const g = parseGraph(JSON.parse('{"steps": [{"id": "a", "model": "m", "input": {}}], "outputs": {"__proto__": "{{steps.a.urls[0]}}"}}'));
    expect(Object.keys(g.outputs)).toEqual(['__proto__']);
    expect(outputRef(g, '__proto__')).toEqual({ kind: 'step', step: 'a', index: 0 });
  });
});

describe('references', () => {
  it('are found anywhere in a body, with the path of their string', () => {
    const refs = refsOf({ prompt: '{{inputs.a}} and {{inputs.b}}', styles: [{ id: '{{inputs.style}}' }], n: 3, urls: ['{{steps.s.urls[12]}}'] }, 'input');
    expect(refs).toEqual([
      { path: 'input.prompt', ref: { kind: 'input', name: 'a' } },
      { path: 'input.prompt', ref: { kind: 'input', name: 'b' } },
      { path: 'input.styles[0].id', ref: { kind: 'input', name: 'style' } },
      { path: 'input.urls[0]', ref: { kind: 'step', step: 's', index: 12 } },
    ]);
  });

  it('are written back without spaces', () => {
    expect(refText({ kind: 'input', name: 'motion' })).toBe('inputs.motion');
    expect(refText(outputRef(parseGraph(TWO_STEPS), 'video'))).toBe('steps.vid.urls[0]');
    expect(wholeRef(' {{inputs.a}}', 'x')).toBeUndefined();
    expect(wholeRef('{{ inputs.a }}', 'x')).toEqual({ kind: 'input', name: 'a' });
    expect(wholeRef(5, 'x')).toBeUndefined();
  });
});

describe('step levels', () => {
  it('put each step after the steps it refers to, independent steps together, in file order', () => {
    const g = parseGraph(
      graphOf(
        [
          step('mix', { a: '{{steps.left.urls[0]}}', b: '{{steps.right.urls[0]}}' }),
          step('right'),
          step('left', { prompt: '{{inputs.p}}' }),
          step('final', { image_url: '{{steps.mix.urls[0]}}', other: '{{steps.left.urls[0]}}' }),
        ],
        { out: '{{steps.final.urls[0]}}' },
      ),
    );
    expect(stepLevels(g).map((level) => level.map((s) => s.id))).toEqual([['right', 'left'], ['mix'], ['final']]);
  });

  it('are one level for steps that refer to no step', () => {
    const g = parseGraph(graphOf([step('a'), step('b')], { a: '{{steps.a.urls[0]}}', b: '{{steps.b.urls[0]}}' }));
    expect(stepLevels(g).map((level) => level.length)).toEqual([2]);
  });
});

describe('substitution', () => {
  const scope = { inputs: { prompt: 'a fox', n: 3, tags: ['x', 'y'], off: null }, steps: { img: ['https://cdn.test/1.png', 'https://cdn.test/2.png'] } };

  it('replaces a whole reference by the value, whatever its JSON type', () => {
    expect(substitute({ prompt: '{{inputs.prompt}}', seed: '{{inputs.n}}', tags: '{{ inputs.tags }}', image_url: '{{steps.img.urls[1]}}', x: '{{inputs.off}}' }, scope, 'input')).toEqual({
      prompt: 'a fox',
      seed: 3,
      tags: ['x', 'y'],
      image_url: 'https://cdn.test/2.png',
      x: null,
    });
  });

  it('writes references inside text into the text, JSON for non-strings', () => {
    expect(substitute({ prompt: '{{inputs.prompt}} x{{inputs.n}} {{inputs.tags}} from {{steps.img.urls[0]}}' }, scope, 'input')).toEqual({
      prompt: 'a fox x3 ["x","y"] from https://cdn.test/1.png',
    });
  });

  it('reaches into arrays and objects and leaves other values alone', () => {
    const body = { styles: [{ id: '{{inputs.prompt}}', strength: 1 }], flag: true, n: 2.5, none: null };
    const out = substitute(body, scope, 'input');
    expect(out).toEqual({ styles: [{ id: 'a fox', strength: 1 }], flag: true, n: 2.5, none: null });
    expect(body.styles[0]!.id).toBe('{{inputs.prompt}}');
  });

  it('drops a key whose whole value is an input not given, so the model default applies', () => {
    expect(substitute({ prompt: '{{inputs.prompt}}', seed: '{{inputs.seed}}' }, scope, 'input')).toEqual({ prompt: 'a fox' });
  });

  it.each<[string, unknown, string]>([
    ['an absent input inside text', { prompt: 'a {{inputs.seed}}' }, "input.prompt: input 'seed' was not given"],
    ['an absent input in an array', { tags: ['{{inputs.seed}}'] }, "input.tags[0]: input 'seed' was not given"],
    ['a step that has not run', { image_url: '{{steps.vid.urls[0]}}' }, "input.image_url: step 'vid' has not run"],
    ['a result index past the step outputs', { image_url: '{{steps.img.urls[2]}}' }, "input.image_url: step 'img' made 2 output(s), not 3"],
  ])('refuses %s', (_, body, message) => {
    expect(() => substitute(body, scope, 'input')).toThrow(new GraphError(message));
  });

  it('refuses text that would grow past GRAPH_LIMITS.textMax once its references are written in', () => {
    const big = { inputs: { p: 'x'.repeat(100_000) }, steps: {} };
    expect(substitute({ prompt: '{{inputs.p}} and {{inputs.p}}' }, big, 'input')).toEqual({ prompt: `${big.inputs.p} and ${big.inputs.p}` });
    expect(() => substitute({ prompt: '{{inputs.p}} {{inputs.p}} {{inputs.p}}' }, big, 'input')).toThrow(
      new GraphError(`input.prompt: longer than ${GRAPH_LIMITS.textMax} characters once its references are written in`),
    );
    // A whole reference is the value itself, however large: nothing is built.
    expect(substitute({ prompt: '{{inputs.p}}' }, { inputs: { p: 'x'.repeat(300_000) }, steps: {} }, 'input')).toEqual({ prompt: 'x'.repeat(300_000) });
  });

  it("does not take a step named like an object's built-in property for one that has run", () => {
    expect(() => substitute({ image_url: '{{steps.constructor.urls[0]}}' }, scope, 'input')).toThrow(new GraphError("input.image_url: step 'constructor' has not run"));
  });

  it('keeps a body key named __proto__ as a key', () => {
    const out = substitute(JSON.parse('{"__proto__": {"polluted": "{{inputs.prompt}}"}}'), scope, 'input') as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('resolves the outputs of a parsed graph', () => {
    const g: NodeAppGraph = parseGraph(TWO_STEPS);
    const urls = substitute(g.outputs, { inputs: {}, steps: { img: ['https://o/i.png'], vid: ['https://o/v.mp4'] } }, 'graph.outputs');
    expect(urls).toEqual({ image: 'https://o/i.png', video: 'https://o/v.mp4' });
  });
});
