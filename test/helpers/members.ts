import type { TestApp } from './app.js';

/**
 * A token of `email` in the default workspace, whose role is then `role`. It is made while the
 * member is an admin (a member may not create tokens) and the role changed after: a token acts with
 * its member's current role.
 */
export async function memberToken(t: TestApp, email: string, role: 'admin' | 'member'): Promise<string> {
  const owner = 'owner@localhost';
  await t.services.identity.addMember('default', email, 'admin', owner);
  const { secret } = await t.services.identity.createToken('default', email, email);
  if (role === 'member') await t.services.identity.addMember('default', email, 'member', owner);
  return secret;
}
