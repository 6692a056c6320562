// Firewall rules of a dedicated database (go-scalingo firewall_rules.go): custom CIDR ranges with a
// label, and managed ranges chosen from the region's list. The emulator records them and checks them
// as the platform would (a valid CIDR, a known managed range, no duplicate); it does not enforce them:
// every client of a local server comes from 127.0.0.1 or the app's Docker network (docs/fidelity.md).
import { isIP } from 'node:net';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { objectId } from '../../shared/ids.ts';
import { type DatabasesStore, type FirewallRuleRow } from './databases.store.ts';

/** Rules per database: the platform's list is short; a bound keeps a loop of creations from growing it. */
const MAX_RULES = 50;

export interface ManagedRange {
  id: string;
  name: string;
}

/** The managed ranges of a region: its egress (what the platform names "Scalingo <region> region"). */
export function managedRanges(region: string): ManagedRange[] {
  return [{ id: `man-${region}-egress`, name: `Scalingo ${region} region` }];
}

/** `a.b.c.d/n` (n ≤ 32) or an IPv6 address with a prefix (≤ 128); the error message when it is not. */
export function cidrError(cidr: string): string | undefined {
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(cidr);
  if (!m) return 'must be a CIDR range (address/prefix length), e.g. 203.0.113.0/24';
  const version = isIP(m[1] ?? '');
  if (!version) return 'has an invalid address';
  if (Number(m[2]) > (version === 4 ? 32 : 128)) return `has a prefix length larger than ${version === 4 ? 32 : 128}`;
  return undefined;
}

export function createFirewallRules(deps: { store: DatabasesStore; clock: Clock; region: string }) {
  const { store } = deps;
  const json = (r: FirewallRuleRow, databaseId: string) => ({
    id: r.id,
    type: r.type,
    cidr: r.cidr,
    label: r.label,
    range_id: r.range_id,
    database_id: databaseId,
  });
  return {
    json,
    ranges: () => managedRanges(deps.region),
    list: (addonId: string) => store.rules(addonId),

    create(
      addonId: string,
      input: { type: 'custom_range' | 'managed_range'; cidr?: string; label?: string; range_id?: string },
    ): FirewallRuleRow {
      const existing = store.rules(addonId);
      if (existing.length >= MAX_RULES)
        throw ApiError.unprocessable({ base: [`a database has at most ${MAX_RULES} firewall rules`] });
      const row: FirewallRuleRow = {
        id: objectId(deps.clock.now()),
        addon_id: addonId,
        type: input.type,
        cidr: '',
        label: '',
        range_id: '',
        created_at: deps.clock.now(),
      };
      if (input.type === 'custom_range') {
        const cidr = input.cidr?.trim() ?? '';
        if (!cidr) throw ApiError.invalid('cidr', "can't be blank for a custom_range rule");
        const err = cidrError(cidr);
        if (err) throw ApiError.invalid('cidr', err);
        if (input.range_id) throw ApiError.invalid('range_id', 'can only be set for a managed_range rule');
        if (existing.some((r) => r.type === 'custom_range' && r.cidr === cidr))
          throw ApiError.invalid('cidr', 'already has a rule on this database');
        row.cidr = cidr;
        row.label = input.label ?? '';
      } else {
        const range = deps.region && managedRanges(deps.region).find((m) => m.id === input.range_id);
        if (!range)
          throw ApiError.invalid(
            'range_id',
            `is not a managed range (known: ${managedRanges(deps.region)
              .map((m) => m.id)
              .join(', ')})`,
          );
        if (input.cidr || input.label)
          throw ApiError.invalid(input.cidr ? 'cidr' : 'label', 'can only be set for a custom_range rule');
        if (existing.some((r) => r.type === 'managed_range' && r.range_id === range.id))
          throw ApiError.invalid('range_id', 'already has a rule on this database');
        row.range_id = range.id;
      }
      store.insertRule(row);
      return row;
    },

    remove(addonId: string, id: string): void {
      if (!store.deleteRule(addonId, id)) throw ApiError.notFound('firewall_rule');
    },
  };
}

export type FirewallRules = ReturnType<typeof createFirewallRules>;
