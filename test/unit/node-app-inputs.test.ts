import { describe, expect, it } from 'vitest';
import { NodeAppInputs } from '../../src/services/node-apps/node-app-inputs.js';

const GOOD = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] };
const BAD = { type: 'object', properties: { code: { type: 'string', pattern: '(' } }, required: [] };

describe("checking execute bodies against a version's input schema", () => {
  it('fills in defaults and names the faulty field', () => {
    const inputs = new NodeAppInputs();
    const schema = { ...GOOD, properties: { ...GOOD.properties, n: { type: 'integer', default: 2 } } };
    expect(inputs.check('v1', schema, { prompt: 'x' })).toEqual({ prompt: 'x', n: 2 });
    expect(() => inputs.check('v1', schema, {})).toThrow("missing required property 'prompt'");
  });

  it('keeps a schema that cannot be compiled refused by version id, without compiling it again', () => {
    const inputs = new NodeAppInputs();
    const refusal = /^this node app version's input schema is not a JSON Schema this server can check inputs with: .*; publish a version with a valid JSON Schema$/;
    expect(() => inputs.check('v1', BAD, { prompt: 'x' })).toThrow(refusal);
    // Versions never change, so the id alone answers: the same refusal, even were the schema now fine.
    expect(() => inputs.check('v1', GOOD, { prompt: 'x' })).toThrow(refusal);
    expect(inputs.check('v2', GOOD, { prompt: 'x' })).toEqual({ prompt: 'x' });
  });
});
