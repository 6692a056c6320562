import { describe, expect, it } from 'vitest';
import { addonKind, clientCommand, hostUrl, urlVariable } from '../../src/dashboard/addon-access.ts';
import { maskUrl } from '../../src/dashboard/dom.ts';
import { looksSecret } from '../../src/dashboard/environment-view.ts';

// What the dashboard's addons and environment pages compose from the API's answers: the URL the
// host reaches (the published port), each client's command line, and what is shown masked.
// psql with such a line is run for real in test/e2e/dashboard-console.test.ts.
describe("the dashboard's addon access lines", () => {
  const inApp = 'postgres://shop_1234:s3cr%2Ft@shop-pg.internal:5432/shop_1234?sslmode=prefer';

  it('puts the published host and port in the URL, keeping user, password, database and query', () => {
    expect(hostUrl(inApp, '127.0.0.1', 32774)).toBe(
      'postgres://shop_1234:s3cr%2Ft@127.0.0.1:32774/shop_1234?sslmode=prefer',
    );
    expect(hostUrl('not a url', '127.0.0.1', 1)).toBeNull();
  });

  it("writes each client's command line, shell-quoted, and masks the password when asked", () => {
    const pg = 'postgres://u:p@127.0.0.1:5000/db';
    expect(clientCommand('postgresql', pg)).toBe(`psql '${pg}'`);
    expect(clientCommand('postgresql', pg, true)).toBe("psql 'postgres://u:••••••@127.0.0.1:5000/db'");
    expect(clientCommand('redis', 'redis://:pw@127.0.0.1:6000')).toBe("redis-cli -u 'redis://:pw@127.0.0.1:6000'");
    expect(clientCommand('mongodb', 'mongodb://u:p@127.0.0.1:7000/db')).toBe(
      "mongosh 'mongodb://u:p@127.0.0.1:7000/db'",
    );
    // mysql takes no URL: options, the password decoded and quoted (a quote in it survives the shell).
    expect(clientCommand('mysql', "mysql://app:it's%20me@127.0.0.1:3307/shop")).toBe(
      "mysql --host=127.0.0.1 --port=3307 --user='app' --password='it'\\''s me' 'shop'",
    );
    expect(clientCommand('mysql', 'mysql://app:pw@127.0.0.1:3307/shop', true)).toContain("--password='••••••'");
    expect(clientCommand('elasticsearch', 'http://127.0.0.1:9200')).toBeNull();
    expect(clientCommand('postgresql', '::')).toBeNull();
  });

  it('names the kinds and their variables as the platform does', () => {
    expect(addonKind('scalingo-postgresql')).toBe('postgresql');
    expect(urlVariable('postgresql')).toBe('SCALINGO_POSTGRESQL_URL');
    expect(urlVariable('mongodb')).toBe('SCALINGO_MONGO_URL');
    expect(urlVariable('influxdb')).toBe('SCALINGO_INFLUXDB_URL');
  });
});

describe('masked values', () => {
  it('hides the password of a URL, and all of a text that is no URL', () => {
    expect(maskUrl('postgres://u:p@h:1/db?x=1')).toBe('postgres://u:••••••@h:1/db?x=1');
    expect(maskUrl('redis://h:1')).toBe('redis://h:1');
    expect(maskUrl('plain-secret-value-long')).toBe('••••••••••••');
  });

  it('takes credential-like names and URLs with a password as secret, and nothing else', () => {
    expect(looksSecret({ name: 'SECRET_KEY_BASE', value: 'x' })).toBe(true);
    expect(looksSecret({ name: 'STRIPE_API_TOKEN', value: 'x' })).toBe(true);
    expect(looksSecret({ name: 'SENTRY_DSN', value: 'x' })).toBe(true);
    expect(looksSecret({ name: 'DATABASE_URL', value: 'postgres://u:p@h/db' })).toBe(true);
    expect(looksSecret({ name: 'PUBLIC_URL', value: 'https://shop.example.test' })).toBe(false);
    expect(looksSecret({ name: 'NODE_ENV', value: 'production' })).toBe(false);
  });
});
