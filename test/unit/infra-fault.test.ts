import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/engines/engine.js';
import { infraFault } from '../../src/lib/infra-fault.js';
import { ObjectStoreError } from '../../src/outputs/s3/s3-client.js';
import { errnoError } from '../helpers/faults.js';

describe('infraFault tells the server\'s faults from the job\'s', () => {
  it('classifies PostgreSQL connection failures, and not input-side network errors', () => {
    expect(infraFault(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))?.kind).toBe('database_unreachable');
    expect(infraFault(Object.assign(new Error('x'), { code: '08006' }))?.kind).toBe('database_unreachable');
    expect(infraFault(new Error('Connection terminated unexpectedly'))?.kind).toBe('database_unreachable');
    expect(infraFault(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))?.kind).toBe('database_unreachable');
    expect(infraFault(Object.assign(new EngineError('input_fetch_failed', 'x'), { cause: Object.assign(new Error('y'), { code: 'ECONNRESET' }) }))).toBeUndefined();
    expect(infraFault(Object.assign(new Error('unique violation'), { code: '23505' }))).toBeUndefined();
    expect(infraFault(new Error('wrapped', { cause: new Error('deeper', { cause: errnoError('ENFILE', 'open', '/x') }) }))?.kind).toBe('too_many_files');
  });

  it("finds the fault behind the local engine's catch-all, which keeps the error as its cause and its text as detail", () => {
    const disk = errnoError('ENOSPC', 'write', '/data/outputs/k/output.png');
    const wrapped = new EngineError('engine_failed', 'the local engine failed while rendering', { detail: disk.stack, cause: disk });
    expect(wrapped.cause).toBe(disk);
    expect(infraFault(wrapped)).toEqual({ kind: 'disk_full', code: 'ENOSPC' });
    // A decoder's stderr kept only as text still names the fault.
    const stderrOnly = new EngineError('engine_failed', 'the local engine failed while rendering', { detail: 'output.mp4: No space left on device' });
    expect(infraFault(stderrOnly)?.kind).toBe('disk_full');
    expect(infraFault(new EngineError('input_invalid', 'image_url is not a usable image', { detail: 'pngload: bad header' }))).toBeUndefined();
  });

  it("counts an object store's failures wherever they appear, engine errors included, and only those it marked", () => {
    const down = new ObjectStoreError('GetObject', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED', $metadata: {} }));
    expect(infraFault(down)).toEqual({ kind: 'object_store_unreachable', code: 'OBJECT_STORE_UNREACHABLE' });
    expect(down.message).toBe('object store GetObject failed: ECONNREFUSED');
    // An asset input read from the bucket inside an engine: still the server's storage.
    expect(infraFault(new EngineError('input_fetch_failed', 'x', { cause: down }))?.kind).toBe('object_store_unreachable');
    for (const [name, status] of [['SlowDown', 503], ['InternalError', 500], ['Throttling', 400], ['TooManyRequests', 429]] as const) {
      expect(infraFault(new ObjectStoreError('PutObject', { name, $metadata: { httpStatusCode: status } }))?.kind, name).toBe('object_store_unreachable');
    }
    expect(infraFault(new ObjectStoreError('PutObject', { name: 'TimeoutError', $metadata: {} }))?.kind).toBe('object_store_unreachable');
    const refused = new ObjectStoreError('HeadObject', { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect(infraFault(refused)).toEqual({ kind: 'object_store_refused', code: 'OBJECT_STORE_REFUSED' });
    expect(refused.message).toBe('object store HeadObject failed: AccessDenied (HTTP 403)');
  });
});
