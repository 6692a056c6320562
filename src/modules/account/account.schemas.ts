import { z } from 'zod';
import { anyObject, paginationMeta } from '../../http/api-schemas.ts';

/** page / per_page of the paginated lists. */

// ---- Answers ----
// The account has none of these things: the lists are always empty (their items are the platform's).

const none = z.array(anyObject).max(0).describe('always empty in the emulator');

export const scmIntegrationList = z.object({ scm_integrations: none });
export const scmRepoLinkList = z.object({ scm_repo_links: none, meta: paginationMeta });
export const reviewAppList = z.object({ review_apps: none });
export const invoiceList = z.object({ invoices: none, meta: paginationMeta });

/** go-scalingo's private network domain names page: pagination fields flat, 0 for no previous/next page. */
export const privateNetworkDomainNames = z.object({
  domain_names: z.object({
    data: z.array(z.string()).max(0),
    meta: z.object({
      prev_page: z.number(),
      current_page: z.number(),
      next_page: z.number(),
      total_pages: z.number(),
      total_count: z.number(),
      per_page: z.number(),
    }),
  }),
});
