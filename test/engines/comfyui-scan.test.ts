import { describe, expect, it } from 'vitest';
import { JsonScanError, JsonScanner } from '../../src/engines/comfyui/comfyui-scan.js';
import type { JsonPath } from '../../src/engines/comfyui/comfyui-scan.js';

function scan(text: string, depth: number, chunk = 7): Array<[JsonPath, string]> {
  const seen: Array<[JsonPath, string]> = [];
  const scanner = new JsonScanner(depth, (path, value) => seen.push([path, value]));
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunk) scanner.write(bytes.subarray(i, i + chunk));
  scanner.end();
  return seen;
}

const queue = {
  queue_running: [[3, 'run-1', { '1': { class_type: 'KSampler', inputs: { text: 'deep "string" \\ é 🦊' } } }, { client_id: 'c-run' }, ['9']]],
  queue_pending: [
    [4, 'pend-1', {}, { client_id: 'c-1', extra_pnginfo: { workflow: { nodes: [{ widgets_values: ['x"]}', 1.5e3, true, null] }] } } }, []],
    [5, 'pend-2', {}, {}, []],
  ],
};

describe('JsonScanner', () => {
  it('hands back the strings at most `depth` deep, with their paths, whatever the chunking', () => {
    for (const chunk of [1, 2, 7, 1 << 16]) {
      expect(scan(JSON.stringify(queue), 4, chunk)).toEqual([
        [['queue_running', 0, 1], 'run-1'],
        [['queue_running', 0, 3, 'client_id'], 'c-run'],
        [['queue_running', 0, 4, 0], '9'],
        [['queue_pending', 0, 1], 'pend-1'],
        [['queue_pending', 0, 3, 'client_id'], 'c-1'],
        [['queue_pending', 1, 1], 'pend-2'],
      ]);
    }
  });

  it('reads escapes and multi-byte characters split across chunks', () => {
    const doc = { a: 'quote " slash \\ tab \t unicode \u00e9 fox 🦊', b: [' x ', ''] };
    expect(scan(JSON.stringify(doc, null, 2), 2, 1)).toEqual([
      [['a'], doc.a],
      [['b', 0], ' x '],
      [['b', 1], ''],
    ]);
  });

  it('refuses what is not JSON or ends early', () => {
    for (const bad of ['{"a": }', '{"a" "b"}', '[1 2]', '{"a": [1}', '{"a": "b"} x', '{"queue_running": [[1, "x"', '']) {
      expect(() => scan(bad, 4), bad).toThrow(JsonScanError);
    }
  });

  it('keeps a few KiB whatever it skips: a 20 MB string deep inside is not held', () => {
    const size = 20 * 1024 * 1024;
    const chunk = Buffer.from('x'.repeat(1 << 16));
    const before = process.memoryUsage().heapUsed;
    const seen: string[] = [];
    const scanner = new JsonScanner(2, (_p, v) => seen.push(v));
    scanner.write(Buffer.from('{"id": "mine", "deep": {"workflow": "'));
    for (let i = 0; i < size; i += chunk.length) scanner.write(chunk);
    scanner.write(Buffer.from('"}, "long": "'));
    for (let i = 0; i < size; i += chunk.length) scanner.write(chunk);
    scanner.write(Buffer.from('"}'));
    scanner.end();
    expect(seen).toEqual(['mine']);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 1024 * 1024);
  });
});
