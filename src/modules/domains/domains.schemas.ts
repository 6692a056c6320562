import { z } from 'zod';
import { isoDateTime } from '../../http/api-schemas.ts';

// PEM text is a few KB; 64 KB leaves room for long chains and bounds the parsing work.
const pem = z
  .string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') })
  .max(65_536, 'is too long (64 KB at most)');

// go-scalingo's DomainsAddParams / DomainsUpdateParams: pointers with omitempty, so absent or a value;
// null is accepted as absent too. Unknown keys are ignored.
export const addDomainSchema = z.object({
  domain: z.object({
    name: z
      .string({ error: (i) => (i.input === undefined ? 'missing field' : 'must be a string') })
      .max(253, 'is too long (253 characters at most)'),
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

// ---- Answers ----

/** The Domain resource (domains.service.ts `toJson`); `tlscert`/`tlskey` only when a certificate is set. */
export const domainResource = z
  .object({
    id: z.string(),
    app_id: z.string(),
    name: z.string(),
    tlscert: z.string().optional(),
    tlskey: z.string().optional(),
    ssl: z.boolean(),
    validity: isoDateTime.nullable(),
    canonical: z.boolean(),
    letsencrypt_enabled: z.boolean(),
    letsencrypt: z.boolean(),
    letsencrypt_status: z.string(),
    ssl_status: z.string(),
    acme_dns_fqdn: z.string(),
    acme_dns_value: z.string(),
    acme_dns_error: z.object({ dns_provider: z.string(), variables: z.array(z.string()) }),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: 'Domain' });

export const domainEnvelope = z.object({ domain: domainResource });
export const domainList = z.object({ domains: z.array(domainResource) });
