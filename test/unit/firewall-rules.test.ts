import { describe, expect, it } from 'vitest';
import { cidrError, managedRanges } from '../../src/modules/databases/firewall-rules.ts';

// The CIDR check of a dedicated database's custom firewall rule (issue 22).
describe('firewall rules: CIDR ranges and managed ranges', () => {
  it('accepts IPv4 and IPv6 ranges with a prefix length in bounds', () => {
    for (const ok of ['203.0.113.0/24', '0.0.0.0/0', '10.1.2.3/32', '2001:db8::/32', '::1/128'])
      expect(cidrError(ok), ok).toBeUndefined();
  });

  it('refuses an address without a prefix, a bad address, a prefix too long, and anything else', () => {
    expect(cidrError('203.0.113.0')).toMatch(/CIDR/);
    expect(cidrError('203.0.113.0/')).toMatch(/CIDR/);
    expect(cidrError('300.0.0.1/8')).toMatch(/invalid address/);
    expect(cidrError('example.com/24')).toMatch(/invalid address/);
    expect(cidrError('10.0.0.0/33')).toMatch(/larger than 32/);
    expect(cidrError('2001:db8::/129')).toMatch(/larger than 128/);
    expect(cidrError('10.0.0.0/24 ')).toMatch(/CIDR/);
    expect(cidrError('10.0.0.0/0024')).toMatch(/CIDR/);
  });

  it("names the region's egress range as the platform does", () => {
    expect(managedRanges('osc-fr1')).toEqual([{ id: 'man-osc-fr1-egress', name: 'Scalingo osc-fr1 region' }]);
  });
});
