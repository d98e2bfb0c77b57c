import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, lineSplitter, parseLine } from '../../src/engines/command/command-protocol.js';

describe('command protocol: lines from a process', () => {
  it('reads each message type, clamping fractions and defaulting codes', () => {
    expect(parseLine('{"type":"ready"}')).toEqual({ type: 'ready' });
    expect(parseLine('{"type":"progress","job_id":"j","fraction":1.7,"status":"sampling"}')).toEqual({ type: 'progress', jobId: 'j', fraction: 1, status: 'sampling' });
    expect(parseLine('{"type":"progress","job_id":"j"}')).toEqual({ type: 'progress', jobId: 'j', fraction: undefined, status: undefined });
    expect(parseLine('{"type":"preview","job_id":"j","path":"p.png"}')).toEqual({ type: 'preview', jobId: 'j', path: 'p.png' });
    expect(parseLine('{"type":"done","job_id":"j","outputs":["a.png",{"path":"b.glb","role":"model"}]}')).toEqual({
      type: 'done',
      jobId: 'j',
      outputs: [{ path: 'a.png' }, { path: 'b.glb', role: 'model' }],
    });
    expect(parseLine('{"type":"error","job_id":"j","message":"no"}')).toEqual({ type: 'error', jobId: 'j', code: 'engine_failed', message: 'no', retryable: false });
  });

  it('takes lines that are no message as the process output: not JSON, no job_id, unknown types', () => {
    for (const line of ['Loading weights 40%', '[1, 2]', '{"type":"progress"}', '{"type":"hello","job_id":"j"}', '{broken']) expect(parseLine(line)).toBeUndefined();
  });

  it('marks a done without usable outputs, or a preview without a path, malformed', () => {
    expect(parseLine('{"type":"done","job_id":"j","outputs":[]}')).toMatchObject({ type: 'malformed' });
    expect(parseLine('{"type":"done","job_id":"j","outputs":[{"role":"output"}]}')).toMatchObject({ type: 'malformed' });
    expect(parseLine('{"type":"preview","job_id":"j"}')).toMatchObject({ type: 'malformed' });
  });

  it('splits chunks into lines wherever the chunks break, and drops a line longer than the cap', () => {
    const lines: string[] = [];
    let overlong = 0;
    const feed = lineSplitter(
      (l) => lines.push(l),
      () => overlong++,
    );
    feed(Buffer.from('{"type":"re'));
    feed(Buffer.from('ady"}\r\nsecond\nthi'));
    feed(Buffer.alloc(MAX_LINE_BYTES, 'x'));
    feed(Buffer.from('rd\nfourth\n'));
    expect(lines).toEqual(['{"type":"ready"}', 'second', 'fourth']);
    expect(overlong).toBe(1);
  });
});
