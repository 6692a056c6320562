import { z } from 'zod';

export const inviteSchema = z.object({
  collaborator: z.object({
    email: z.string().email('is not a valid e-mail address'),
    is_limited: z.boolean().nullish(),
  }),
});
// go-scalingo's CollaboratorUpdateParams: {"collaborator":{"is_limited":bool}}.
export const updateCollaboratorSchema = z.object({
  collaborator: z.object({
    is_limited: z.boolean({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a boolean') }),
  }),
});

/** GET /v1/apps/collaboration?token=… */
export const acceptQuery = z.object({ token: z.string() });

// ---- Answers ----

/** The Collaborator resource (collaborators.service.ts `toJson`); the invitation link only to the inviter. */
export const collaboratorResource = z
  .object({
    id: z.string(),
    app_id: z.string(),
    email: z.string(),
    username: z.string(),
    status: z.enum(['pending', 'accepted']),
    user_id: z.string().nullable(),
    is_limited: z.boolean(),
    invitation_link: z.string().optional(),
  })
  .meta({ id: 'Collaborator' });

export const collaboratorEnvelope = z.object({ collaborator: collaboratorResource });
export const collaboratorList = z.object({ collaborators: z.array(collaboratorResource) });
