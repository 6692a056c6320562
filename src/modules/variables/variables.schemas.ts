import { z } from 'zod';

// The platform's limits: names up to 64 characters (letters, digits, underscores), values up to 32768.
const name = z
  .string()
  .min(1, "can't be blank")
  .max(64, 'is too long (maximum is 64 characters)')
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'should contain only letters, digits and underscores, and not start with a digit');
const value = z.string().max(32768, 'is too long (maximum is 32768 characters)');

export const createVariableSchema = z.object({ variable: z.object({ name, value }) });
export const updateVariableSchema = z.object({ variable: z.object({ value }) });
// The Terraform provider sends {"variables": null} (a nil slice) at every app creation without an
// `environment`: null and [] change nothing (no event) and answer an empty list.
export const bulkVariablesSchema = z.object({
  variables: z
    .array(z.object({ name, value }))
    .nullable()
    .transform((v) => v ?? []),
});
export const bulkDeleteSchema = z.object({ variable_ids: z.array(z.string()).min(1) });

export type VariableInput = { name: string; value: string };

// ---- Answers ----

export const variableResource = z
  .object({ id: z.string(), name: z.string(), value: z.string() })
  .meta({ id: 'Variable' });
export const variableEnvelope = z.object({ variable: variableResource });
export const variableList = z.object({ variables: z.array(variableResource) });
