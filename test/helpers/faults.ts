import type { Log } from '../../src/lib/log.js';

/** Test doubles for infrastructure faults (test/security/infra-faults and full-disk). */

/** An error as Node's fs makes it: errno code, syscall and the absolute path in the message. */
export function errnoError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const text: Record<string, string> = {
    ENOSPC: 'no space left on device',
    EMFILE: 'too many open files',
    EROFS: 'read-only file system',
    ECONNREFUSED: 'connection refused',
  };
  return Object.assign(new Error(`${code}: ${text[code] ?? 'error'}, ${syscall} '${path}'`), { code, syscall, path, errno: -1 });
}

export interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

export class CapturingLog implements Log {
  readonly lines: Line[] = [];
  info(obj: object, msg: string) {
    this.lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg });
  }
  warn(obj: object, msg: string) {
    this.lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg });
  }
  error(obj: object, msg: string) {
    this.lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg });
  }
  alerts(jobId: string) {
    return this.lines.filter((l) => l.level === 'error' && l.obj.alert === 'infrastructure_fault' && l.obj.jobId === jobId);
  }
}
