import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskOutputStore } from '../../src/outputs/disk/disk-output-store.js';
import { isOutputKey, newOutputKey } from '../../src/outputs/output-store.js';
import { plantUnremovable, releaseUnremovable } from '../helpers/unremovable.js';
import { listAll, text } from '../helpers/output-store.js';

const TRASH = /^\.trash-([A-Za-z0-9_-]{32})-[0-9a-f]{16}$/;

/** What only the disk store does: directories per key, trash names, symlinks and traversal refused. */
describe('DiskOutputStore', () => {
  let root: string;
  let files: DiskOutputStore;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mediagen-outputs-'));
    files = new DiskOutputStore(join(root, 'outputs'));
  });
  afterEach(() => {
    releaseUnremovable(root);
    rmSync(root, { recursive: true, force: true });
  });

  it('dir and url refuse unchecked input instead of building a path from it', () => {
    const key = newOutputKey();
    expect(files.dir(key)).toBe(join(root, 'outputs', key));
    expect(files.url(key, 'image.png')).toBe(`/outputs/${key}/image.png`);
    expect(() => files.dir('../../etc')).toThrow();
    expect(() => files.url(key, '../x')).toThrow();
    expect(() => files.url('nope', 'image.png')).toThrow();
  });

  it('keeps a run\'s scratch inside the key\'s directory, out of every URL, so a put is a rename', async () => {
    const key = newOutputKey();
    const scratch = await files.scratch(key);
    expect(scratch.dir.startsWith(`${files.dir(key)}/.`)).toBe(true);
    writeFileSync(join(scratch.dir, 'a.png'), 'x');
    const name = scratch.dir.slice(files.dir(key).length + 1);
    expect(await files.stat(key, name)).toBeUndefined();
    await files.put(key, 'a.png', join(scratch.dir, 'a.png'));
    expect(existsSync(join(scratch.dir, 'a.png'))).toBe(false);
    await scratch.dispose();
    expect(readdirSync(files.dir(key))).toEqual(['a.png']);
  });

  it('reset creates the directory empty, removing what a previous attempt left', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    expect(dir).toBe(files.dir(key));
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(join(dir, 'partial.png'), 'x');
    mkdirSync(join(dir, 'sub'));
    expect(await files.reset(key)).toBe(dir);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('remove deletes the directory and its files, and is quiet when it is already gone', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'x');
    await files.remove(key);
    expect(existsSync(dir)).toBe(false);
    await expect(files.remove(key)).resolves.toBeUndefined();
    await expect(files.remove(newOutputKey())).resolves.toBeUndefined();
  });

  it('remove takes the key out of reach first: when deleting the files fails, it throws and only a trash directory is left', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'x');
    if (!plantUnremovable(dir)) return; // neither chattr nor permissions can stop a deletion here
    // The code depends on how rm meets the refusal (EPERM, EACCES, ENOTDIR...).
    await expect(files.remove(key)).rejects.toMatchObject({ code: expect.any(String) });
    expect(existsSync(dir)).toBe(false);
    expect(await files.stat(key, 'a.png')).toBeUndefined();
    const left = readdirSync(files.root);
    expect(left).toHaveLength(1);
    expect(TRASH.exec(left[0]!)?.[1]).toBe(key);
    // Nothing under the trash name can be reached as a key.
    expect(isOutputKey(left[0]!)).toBe(false);
    expect(await files.stat(left[0]!, 'a.png')).toBeUndefined();
    // Once the cause is gone, the janitor's removeEntry finishes the job.
    releaseUnremovable(root);
    const [trash] = await listAll(files);
    expect(trash).toMatchObject({ kind: 'trash', key, name: left[0] });
    await files.removeEntry(trash!);
    expect(readdirSync(files.root)).toEqual([]);
  });

  it('retire renames to a fresh trash name each time, and finds nothing to retire when the directory is gone', async () => {
    const key = newOutputKey();
    await files.reset(key);
    const first = await files.retire(key);
    await files.reset(key);
    const second = await files.retire(key);
    expect(first).toMatch(TRASH);
    expect(second).toMatch(TRASH);
    expect(second).not.toBe(first);
    expect(await files.retire(key)).toBeUndefined();
    expect(readdirSync(files.root).sort()).toEqual([first, second].sort());
  });

  it('list streams the key and trash directories with their change time, and nothing else', async () => {
    const before = Date.now();
    const a = newOutputKey();
    const b = newOutputKey();
    await files.reset(a);
    await files.reset(b);
    const trash = (await files.retire(b))!;
    const other = newOutputKey();
    mkdirSync(join(files.root, '.work-x'));
    writeFileSync(join(files.root, other), 'a file named like a key');
    symlinkSync(files.dir(a), join(files.root, newOutputKey()));
    mkdirSync(join(files.root, `.trash-${a}`));
    const listed = await listAll(files);
    expect(listed.map(({ kind, name, key }) => ({ kind, name, key }))).toEqual(
      [
        { kind: 'key', name: a, key: a },
        { kind: 'trash', name: trash, key: b },
      ].sort((x, y) => x.name.localeCompare(y.name)),
    );
    for (const e of listed) {
      expect(e.changedMs).toBeGreaterThanOrEqual(before - 1000);
      expect(e.changedMs).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('list of a root that does not exist yet is empty', async () => {
    expect(await listAll(new DiskOutputStore(join(root, 'nowhere')))).toEqual([]);
  });

  it('removeEntry deletes a listed key or trash directory, idempotently, and refuses any other name', async () => {
    const key = newOutputKey();
    writeFileSync(join(await files.reset(key), 'a.png'), 'x');
    const trash = (await files.retire(key))!;
    await files.reset(key);
    for (const e of await listAll(files)) {
      await files.removeEntry(e);
      await files.removeEntry(e);
    }
    expect(readdirSync(files.root)).toEqual([]);
    await expect(files.removeEntry({ kind: 'trash', name: '../../etc' })).rejects.toThrow();
    await expect(files.removeEntry({ kind: 'key', name: '..' })).rejects.toThrow();
    expect(trash).toMatch(TRASH);
  });

  it('removeFile deletes one file', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'x');
    writeFileSync(join(dir, 'b.png'), 'y');
    await files.removeFile(key, 'a.png');
    await files.removeFile(key, 'a.png');
    expect(readdirSync(dir)).toEqual(['b.png']);
  });

  it('stat gives path, size and mtime of a regular file', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'hello');
    const s = await files.stat(key, 'a.png');
    expect(s).toMatchObject({ path: join(dir, 'a.png'), size: 5 });
    expect(s!.mtimeMs).toBeGreaterThan(0);
  });

  it('stat refuses traversal, bad names, missing files, directories and symlinks', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    writeFileSync(join(root, 'secret.txt'), 'secret');
    writeFileSync(join(root, 'outputs', 'top.txt'), 'top');
    mkdirSync(join(dir, 'sub.png'));
    symlinkSync(join(root, 'secret.txt'), join(dir, 'link.png'));
    for (const name of ['../../secret.txt', '..', '../top.txt', '.', 'sub.png/../../../secret.txt', '%2e%2e', 'missing.png', 'sub.png', 'link.png']) {
      expect(await files.stat(key, name), name).toBeUndefined();
    }
    for (const k of ['..', '../outputs', key.slice(1), '']) {
      expect(await files.stat(k, 'top.txt'), k).toBeUndefined();
    }
    expect(await files.stat(newOutputKey(), 'a.png')).toBeUndefined();
  });

  it('open gives a handle on the file that outlives its removal', async () => {
    const key = newOutputKey();
    const dir = await files.reset(key);
    writeFileSync(join(dir, 'a.png'), 'hello');
    const opened = (await files.open(key, 'a.png'))!;
    expect(opened.size).toBe(5);
    await files.remove(key);
    expect(await text(opened.stream())).toBe('hello');
    expect(await files.open(key, 'a.png')).toBeUndefined();
    expect(await files.open(key, '../a.png')).toBeUndefined();
  });

});
