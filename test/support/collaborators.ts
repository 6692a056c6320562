import { type Harness, type TOKENS } from '../harness.ts';

/**
 * Makes test user `as` ('other' by default) a Limited Collaborator of `app`, owned by 'dev'. A test user's
 * invitation is accepted at once (the user exists), so the next call `{ as }` meets the Limited Collaborator
 * rules (doc.scalingo.com/platform/user-management/teamwork/roles). Throws with the answer when the
 * invitation is refused, so a test's 403 is never the 404 of a user who is no collaborator at all.
 */
export async function addLimitedCollaborator(
  h: Harness,
  app: string,
  as: Exclude<keyof typeof TOKENS, 'dev'> = 'other',
): Promise<{ id: string; email: string }> {
  const r = await h.call('POST', `/v1/apps/${app}/collaborators`, {
    body: { collaborator: { email: `${as}@example.test`, is_limited: true } },
  });
  if (r.status !== 201) throw new Error(`invite ${as} to ${app} as a Limited Collaborator: ${r.status} ${r.text}`);
  if (r.body.collaborator.status !== 'accepted') throw new Error(`${as} has not accepted: ${r.text}`);
  return r.body.collaborator;
}
