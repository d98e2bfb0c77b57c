import type { Log } from '../../lib/log.js';
import type { OutputStore } from '../../outputs/output-store.js';

/**
 * Removes a deleted owner's stored files after its row is gone. A failure is logged, not thrown:
 * the files are already unservable, and the output janitor removes what is left. No message in
 * the log: it would carry the directory's path, hence the key.
 */
export async function removeOrLeaveToJanitor(
  outputs: Pick<OutputStore, 'remove'>,
  key: string,
  log: Pick<Log, 'warn'>,
  fields: Readonly<Record<string, unknown>>,
  what: string,
): Promise<void> {
  await outputs.remove(key).catch((err: unknown) => {
    const e = err as NodeJS.ErrnoException;
    log.warn({ ...fields, err: { code: e.code, syscall: e.syscall } }, `removing ${what} failed; the janitor will`);
  });
}
