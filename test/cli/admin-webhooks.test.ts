import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, cleanup, oneLineError, run, tempDir } from '../e2e/binary.js';

const OWNER = 'owner@acme.test';
const ADMIN = 'admin@acme.test';
const MEMBER = 'member@acme.test';
const DAY_MS = 24 * 3_600_000;
/** `whsec_` and base64, as the standardwebhooks package reads it. */
const SECRET_RE = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

interface SecretReport {
  workspace_id: string;
  secret: string;
  previous_secret_valid_until: string | null;
}

const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);
const show = (dir: string, as: string, ws = 'acme') => adminJson<SecretReport>(dir, ['webhook-secret', 'show', '--workspace', ws, '--as', as]);
const rotate = (dir: string, as: string, ws = 'acme') => adminJson<SecretReport>(dir, ['webhook-secret', 'rotate', '--workspace', ws, '--as', as]);

/** Workspace `acme` with an owner, an admin and a member; returns its id. */
async function acme(dir: string): Promise<string> {
  const { workspace_id } = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
  await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', ADMIN, '--role', 'admin', '--as', OWNER]);
  await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', MEMBER, '--role', 'member', '--as', OWNER]);
  return workspace_id;
}

/** `until` is about 24 h after a moment between `before` and `after` (ms since the epoch). */
function expectADayAfter(until: string | null, before: number, after: number): void {
  expect(until).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  const at = Date.parse(until!);
  expect(at).toBeGreaterThanOrEqual(before + DAY_MS - 1000);
  expect(at).toBeLessThanOrEqual(after + DAY_MS + 1000);
}

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin webhook-secret (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('show makes the secret once; rotate replaces it and keeps the old one signing for 24 h', async () => {
    const dir = tempDir();
    const id = await acme(dir);

    const first = await show(dir, OWNER);
    expect(first).toEqual({ workspace_id: id, secret: expect.stringMatching(SECRET_RE), previous_secret_valid_until: null });
    // By id and with the email in another case: the same workspace, the same secret.
    expect(await show(dir, 'Owner@ACME.test', id)).toEqual(first);

    const before = Date.now();
    const rotated = await rotate(dir, OWNER);
    const after = Date.now();
    expect(rotated.workspace_id).toBe(id);
    expect(rotated.secret).toMatch(SECRET_RE);
    expect(rotated.secret).not.toBe(first.secret);
    expectADayAfter(rotated.previous_secret_valid_until, before, after);

    expect(await show(dir, OWNER)).toEqual(rotated);
  });

  it('an admin can show and rotate too; a second rotation moves the 24 h window', async () => {
    const dir = tempDir();
    const id = await acme(dir);
    const owners = await show(dir, OWNER);
    expect(await show(dir, ADMIN)).toEqual(owners);

    const before = Date.now();
    const rotated = await rotate(dir, ADMIN);
    const after = Date.now();
    expect(rotated).toMatchObject({ workspace_id: id });
    expect(rotated.secret).not.toBe(owners.secret);
    expectADayAfter(rotated.previous_secret_valid_until, before, after);
    expect(await show(dir, OWNER)).toEqual(rotated);

    const again = await rotate(dir, ADMIN);
    expect(again.secret).not.toBe(rotated.secret);
    expect(again.secret).not.toBe(owners.secret);
    expect(Date.parse(again.previous_secret_valid_until!)).toBeGreaterThanOrEqual(Date.parse(rotated.previous_secret_valid_until!));
    expect(await show(dir, ADMIN)).toEqual(again);
  });

  it('rotate on a workspace that never showed its secret makes one, with no previous secret to keep', async () => {
    const dir = tempDir();
    const id = await acme(dir);
    const made = await rotate(dir, OWNER);
    expect(made).toEqual({ workspace_id: id, secret: expect.stringMatching(SECRET_RE), previous_secret_valid_until: null });
    expect(await show(dir, OWNER)).toEqual(made);
  });

  it('refuses members, non-members and unknown workspaces with exit 1 and one line, and changes nothing', async () => {
    const dir = tempDir();
    await acme(dir);
    const secret = (await show(dir, OWNER)).secret;

    expect(oneLineError(await admin(dir, 'webhook-secret', 'show', '--workspace', 'acme', '--as', MEMBER))).toBe(
      `mediagen: only owners and admins can see the webhook secret; ${MEMBER} is a member`,
    );
    expect(oneLineError(await admin(dir, 'webhook-secret', 'rotate', '--workspace', 'acme', '--as', MEMBER))).toBe(
      `mediagen: only owners and admins can rotate the webhook secret; ${MEMBER} is a member`,
    );
    expect(oneLineError(await admin(dir, 'webhook-secret', 'show', '--workspace', 'acme', '--as', 'stranger@else.test'))).toBe(
      "mediagen: only owners and admins can see the webhook secret; stranger@else.test is not a member of workspace 'acme'",
    );
    expect(oneLineError(await admin(dir, 'webhook-secret', 'rotate', '--workspace', 'acme', '--as', 'stranger@else.test'))).toBe(
      "mediagen: only owners and admins can rotate the webhook secret; stranger@else.test is not a member of workspace 'acme'",
    );
    for (const sub of ['show', 'rotate']) {
      const r = await admin(dir, 'webhook-secret', sub, '--workspace', 'nope', '--as', OWNER);
      expect(oneLineError(r), sub).toBe("mediagen: workspace 'nope' not found");
      expect(r.stdout, sub).toBe('');
    }
    // The refused rotations left the secret as it was.
    expect(await show(dir, OWNER)).toMatchObject({ secret, previous_secret_valid_until: null });
  });

  it('without --json, prints the secret on the first line, and after a rotation when the old one stops signing', async () => {
    const dir = tempDir();
    await acme(dir);
    const shown = await admin(dir, 'webhook-secret', 'show', '--workspace', 'acme', '--as', OWNER);
    expect(shown.code).toBe(0);
    const secret = shown.stdout.split('\n')[0]!;
    expect(secret).toMatch(SECRET_RE);
    expect(shown.stdout).toBe(`${secret}\n`);
    expect((await show(dir, OWNER)).secret).toBe(secret);

    const rotated = await admin(dir, 'webhook-secret', 'rotate', '--workspace', 'acme', '--as', OWNER);
    expect(rotated.code).toBe(0);
    const [fresh, note] = rotated.stdout.split('\n');
    expect(fresh).toMatch(SECRET_RE);
    expect(fresh).not.toBe(secret);
    const { previous_secret_valid_until: until } = await show(dir, OWNER);
    expect(note).toBe(`(the previous secret also signs until ${until})`);
    const again = await admin(dir, 'webhook-secret', 'show', '--workspace', 'acme', '--as', ADMIN);
    expect(again.stdout.split('\n')[0]).toBe(fresh);
  });
});
