import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../src/http/api-routes.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';

describe('the OpenAPI document (/_emulator/openapi.json)', () => {
  let h: Harness;
  let doc: {
    openapi: string;
    paths: Record<string, Record<string, { responses: Record<string, unknown>; summary?: string }>>;
  };
  beforeAll(async () => {
    h = await startEmulator({}, { runtime: new FakeLogsRuntime() });
    const res = await h.call('GET', '/_emulator/openapi.json', { as: null });
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => h?.stop());

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('covers every route the HTTP app serves, each with a summary and at least one answer', () => {
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        documented.add(`${method.toUpperCase()} ${path}`);
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
    // Hono lists middleware as method ALL; every handler is one method on one path.
    const served = h.emu.app.routes.filter((r) => r.method !== 'ALL').map((r) => ({ method: r.method, path: r.path }));
    const missing = served.map((r) => `${r.method} ${openApiPath(r.path)}`).filter((k) => !documented.has(k));
    expect([...new Set(missing)]).toEqual([]);
    // Every area declares its routes (179 operations when this was written, addon servers off).
    expect(documented.size).toBeGreaterThanOrEqual(170);
  });
});
