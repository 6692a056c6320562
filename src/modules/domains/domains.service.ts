import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { defined } from '../../shared/defined.ts';
import { objectId } from '../../shared/ids.ts';
import { type AppsService } from '../apps/apps.service.ts';
import { type AppRow } from '../apps/apps.store.ts';
import { type UserRow } from '../auth/principal.ts';
import { type EventsService } from '../events/events.service.ts';
import { type CertificateInfo, checkCertificate } from './certificates.ts';
import { type AddDomainInput, type UpdateDomainInput } from './domains.schemas.ts';
import { type DomainRow, type DomainsStore } from './domains.store.ts';
import { hostnameProblem } from './hostnames.ts';

export interface DomainsServiceDeps {
  db: Db;
  store: DomainsStore;
  apps: AppsService;
  events: EventsService;
  clock: Clock;
}

/** The platform caps custom domains per app; 50 keeps every list and the router's table small. */
export const MAX_DOMAINS_PER_APP = 50;

/**
 * Custom domains (go-scalingo domains.go): add, list, show, update (certificate, canonical flag,
 * Let's Encrypt), remove. One canonical domain per app; the router serves the app on each domain and
 * redirects to the canonical one. Let's Encrypt never runs locally: its status stays `pending_dns`.
 */
export function createDomainsService(deps: DomainsServiceDeps) {
  const { store, clock } = deps;

  function toJson(d: DomainRow) {
    const ssl = d.tlscert !== null;
    return {
      id: d.id,
      app_id: d.app_id,
      name: d.name,
      // Read side of tlscert/tlskey: the certificate's subject and the key's type and length.
      ...(ssl ? { tlscert: d.cert_subject ?? '', tlskey: d.tlskey ?? '' } : {}),
      ssl,
      validity: ssl ? isoDate(d.cert_expires_at) : null,
      canonical: d.canonical === 1,
      letsencrypt_enabled: d.letsencrypt_enabled === 1,
      letsencrypt: false,
      letsencrypt_status: 'pending_dns',
      ssl_status: ssl ? 'success' : 'pending',
      acme_dns_fqdn: '',
      acme_dns_value: '',
      acme_dns_error: { dns_provider: '', variables: [] as string[] },
      created_at: isoDate(d.created_at),
      updated_at: isoDate(d.updated_at),
    };
  }

  function certificate(
    name: string,
    cert: string | null | undefined,
    key: string | null | undefined,
  ): CertificateInfo | null | undefined {
    if (cert === undefined && key === undefined) return undefined; // unchanged
    if (cert === null && key === null) return undefined;
    // go-scalingo's DomainUnsetCertificate sends both as "".
    if (!cert && !key) return null;
    if (!cert) throw ApiError.invalid('tlscert', 'missing field: a certificate goes with its key');
    if (!key) throw ApiError.invalid('tlskey', 'missing field: a key goes with its certificate');
    return checkCertificate(cert, key, name, clock.now());
  }

  function withCertificate(row: DomainRow, info: CertificateInfo | null, cert: string | null | undefined): DomainRow {
    return info
      ? {
          ...row,
          tlscert: defined(cert, 'the certificate'),
          tlskey: info.keyDescription,
          cert_subject: info.subject,
          cert_expires_at: info.expiresAt,
        }
      : { ...row, tlscert: null, tlskey: null, cert_subject: null, cert_expires_at: null };
  }

  function visible(user: UserRow, appKey: string, id: string): { app: AppRow; domain: DomainRow } {
    const app = deps.apps.visibleApp(user, appKey);
    const domain = store.find(app.id, id);
    if (!domain) throw ApiError.notFound('domain');
    return { app, domain };
  }

  return {
    toJson,
    list(user: UserRow, appKey: string) {
      return store.ofApp(deps.apps.visibleApp(user, appKey).id).map(toJson);
    },
    show(user: UserRow, appKey: string, id: string) {
      return toJson(visible(user, appKey, id).domain);
    },

    add(user: UserRow, appKey: string, input: AddDomainInput) {
      const app = deps.apps.writableApp(user, appKey, 'change domains');
      const name = input.name.trim().replace(/\.$/, '');
      const problem = hostnameProblem(name);
      if (problem) throw ApiError.invalid('name', problem);
      if (store.byName(name)) throw ApiError.invalid('name', 'has already been taken');
      const reserved = /^([a-z0-9-]+)\.localhost$/.exec(name)?.[1];
      if (reserved && deps.apps.find(reserved)?.name === reserved)
        throw ApiError.invalid('name', `is the default address of the app ${reserved}`);
      if (store.ofApp(app.id).length >= MAX_DOMAINS_PER_APP)
        throw ApiError.invalid('name', `cannot be added: an app has at most ${MAX_DOMAINS_PER_APP} domains`);
      const info = certificate(name, input.tlscert, input.tlskey);
      const now = clock.now();
      let row: DomainRow = {
        id: objectId(now),
        app_id: app.id,
        name,
        canonical: input.canonical ? 1 : 0,
        letsencrypt_enabled: input.letsencrypt_enabled === false ? 0 : 1,
        tlscert: null,
        tlskey: null,
        cert_subject: null,
        cert_expires_at: null,
        created_at: now,
        updated_at: now,
      };
      if (info) row = withCertificate(row, info, input.tlscert);
      tx(deps.db, () => {
        if (row.canonical) store.clearCanonical(app.id); // one canonical domain per app
        store.insert(row);
        deps.events.record({ type: 'new_domain', app, user, typeData: { hostname: name, ssl: row.tlscert !== null } });
      });
      return toJson(row);
    },

    update(user: UserRow, appKey: string, id: string, input: UpdateDomainInput) {
      const { domain } = visible(user, appKey, id);
      const app = deps.apps.writableApp(user, appKey, 'change domains');
      const info = certificate(domain.name, input.tlscert, input.tlskey);
      let next: DomainRow = { ...domain, updated_at: clock.now() };
      if (input.canonical != null) next.canonical = input.canonical ? 1 : 0;
      if (input.letsencrypt_enabled != null) next.letsencrypt_enabled = input.letsencrypt_enabled ? 1 : 0;
      if (info !== undefined) next = withCertificate(next, info, input.tlscert);
      tx(deps.db, () => {
        if (next.canonical && !domain.canonical) store.clearCanonical(app.id);
        store.update(next);
        deps.events.record({
          type: 'edit_domain',
          app,
          user,
          typeData: {
            hostname: domain.name,
            ssl: next.tlscert !== null,
            old_ssl: domain.tlscert !== null,
            canonical: next.canonical === 1,
          },
        });
      });
      return toJson(next);
    },

    remove(user: UserRow, appKey: string, id: string): void {
      const { domain } = visible(user, appKey, id);
      const app = deps.apps.writableApp(user, appKey, 'change domains');
      tx(deps.db, () => {
        store.delete(domain.id);
        deps.events.record({ type: 'delete_domain', app, user, typeData: { hostname: domain.name } });
      });
    },

    /** For the router: the app a custom hostname (or its wildcard parent) serves, and its canonical host. */
    route(hostname: string): { appId: string; canonical: string | null } | null {
      const exact = store.byName(hostname);
      const dot = hostname.indexOf('.');
      const d = exact ?? (dot > 0 ? store.byName(`*${hostname.slice(dot)}`) : undefined);
      if (!d) return null;
      return { appId: d.app_id, canonical: store.canonicalOf(d.app_id)?.name ?? null };
    },
    canonicalOf: (appId: string) => store.canonicalOf(appId)?.name ?? null,
  };
}

export type DomainsService = ReturnType<typeof createDomainsService>;
