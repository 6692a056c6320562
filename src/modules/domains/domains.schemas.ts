import { z } from 'zod';

// PEM text is a few KB; 64 KB leaves room for long chains and bounds the parsing work.
const pem = z.string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') }).max(65_536, 'is too long (64 KB at most)');

// go-scalingo's DomainsAddParams / DomainsUpdateParams: pointers with omitempty, so absent or a value;
// null is accepted as absent too. Unknown keys are ignored.
export const addDomainSchema = z.object({
  domain: z.object({
    name: z.string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') }).max(253, 'is too long (253 characters at most)'),
    canonical: z.boolean().nullish(),
    tlscert: pem.nullish(),
    tlskey: pem.nullish(),
    letsencrypt_enabled: z.boolean().nullish(),
  }),
});

export const updateDomainSchema = z.object({
  domain: z.object({
    canonical: z.boolean().nullish(),
    tlscert: pem.nullish(),
    tlskey: pem.nullish(),
    letsencrypt_enabled: z.boolean().nullish(),
  }),
});

export type AddDomainInput = z.infer<typeof addDomainSchema>['domain'];
export type UpdateDomainInput = z.infer<typeof updateDomainSchema>['domain'];

// A hostname: labels of letters, digits and inner hyphens, at least two labels; a leading `*.` makes a
// wildcard domain (the platform accepts them). Checked label by label: no backtracking.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function hostnameProblem(name: string): string | null {
  if (name.length === 0) return "can't be blank";
  if (name !== name.toLowerCase()) return 'must be in lower case';
  const labels = name.split('.');
  if (labels[0] === '*') labels.shift();
  if (labels.length < 2) return 'must be a fully qualified domain name, such as www.example.com or shop.localhost';
  if (!labels.every((l) => LABEL.test(l))) return 'is not a valid hostname: use letters, digits, hyphens and dots only';
  return null;
}
