import { Empty, PageTitle } from '../components/ui.js';
import { canManage, useSession } from '../lib/session.js';
import { Deliveries } from './workspace/deliveries.js';
import { Tokens } from './workspace/tokens.js';
import { WebhookSecret } from './workspace/webhook-secret.js';

/** The workspace as its owners and admins manage it: API tokens, webhook signing, recent deliveries. */
export function Workspace() {
  const { workspace } = useSession();
  return (
    <>
      <PageTitle>Workspace</PageTitle>
      <dl class="facts card">
        <dt>Name</dt>
        <dd>{workspace.name}</dd>
        <dt>Id</dt>
        <dd>
          <code>{workspace.id}</code>
        </dd>
        <dt>Signed in as</dt>
        <dd>
          {workspace.member_email} ({workspace.role ?? 'no longer a member'}), with token “{workspace.token.name}”
        </dd>
        <dt>Limits</dt>
        <dd>
          {workspace.limits.max_concurrent_jobs} jobs at once, {workspace.limits.max_backlogged_jobs} waiting
        </dd>
      </dl>
      {canManage(workspace) ? (
        <>
          <Tokens />
          <WebhookSecret />
          <Deliveries />
        </>
      ) : (
        <Empty>Only the workspace's owners and admins manage its API tokens and webhook settings.</Empty>
      )}
    </>
  );
}
