// TLS of the addon servers and the force-ssl feature (`database-enable-feature force-ssl`): every server serves
// TLS with Debian's self-signed "snakeoil" pair (package ssl-cert), and force-ssl makes it refuse connections
// without TLS, as the platform's "Force TLS connections" does (doc.scalingo.com/databases/about/network-exposure).
// Each `on`/`off` script returns once a connection without TLS is refused (or accepted again).

const PG = '/usr/lib/postgresql/15/bin';
const CERT = '/etc/ssl/certs/ssl-cert-snakeoil.pem';
const KEY = '/etc/ssl/private/ssl-cert-snakeoil.key';

/** Turns force-ssl on or off in the running server; the state is kept in its volume (it survives restarts). */
export interface ForceSslScripts {
  on: string;
  off: string;
}

/** Waits (10 s at most) until `probe` (a connection without TLS) fails (`refused`) or succeeds (`accepted`). */
const until = (probe: string, state: 'refused' | 'accepted') =>
  String.raw`for i in $(seq 1 100); do ${probe} >/dev/null 2>&1 ${state === 'refused' ? '||' : '&&'} exit 0; sleep 0.1; done
echo "the server still ${state === 'refused' ? 'accepts' : 'refuses'} connections without TLS" >&2; exit 1`;

// PostgreSQL: pg_hba's TCP lines become hostssl (and back), then the server reloads its configuration.
const PG_PLAIN = String.raw`PGPASSWORD="$ADDON_PASSWORD" ${PG}/psql "host=127.0.0.1 sslmode=disable user=$ADDON_USER \
dbname=$ADDON_DATABASE" -tAc 'SELECT 1'`;
const PG_RELOAD = `${PG}/psql -q -U postgres -d postgres -tAc 'SELECT pg_reload_conf()' >/dev/null`;
export const PG_FORCE_SSL: ForceSslScripts = {
  on: String.raw`sed -i -E 's/^host([[:space:]])/hostssl\1/' /var/lib/postgresql/data/pgdata/pg_hba.conf && ${PG_RELOAD}
${until(PG_PLAIN, 'refused')}`,
  off: String.raw`sed -i -E 's/^hostssl([[:space:]])/host\1/' /var/lib/postgresql/data/pgdata/pg_hba.conf && ${PG_RELOAD}
${until(PG_PLAIN, 'accepted')}`,
};

// MariaDB: require_secure_transport (Unix-socket connections, the emulator's own, stay allowed); a flag file in the
// data directory gives the same at the next start.
const MYSQL_FLAG = '/var/lib/mysql/.force-ssl';
export const MYSQL_TLS_ARGS = `--ssl-cert=${CERT} --ssl-key=${KEY} $([ -f ${MYSQL_FLAG} ] && echo --require-secure-transport=ON)`;
const MYSQL_PLAIN =
  'mariadb --skip-ssl -h 127.0.0.1 -u "$ADDON_USER" -p"$ADDON_PASSWORD" "$ADDON_DATABASE" -e "SELECT 1"';
export const MYSQL_FORCE_SSL: ForceSslScripts = {
  on: `mariadb -e 'SET GLOBAL require_secure_transport=ON' && touch ${MYSQL_FLAG}\n${until(MYSQL_PLAIN, 'refused')}`,
  off: `mariadb -e 'SET GLOBAL require_secure_transport=OFF' && rm -f ${MYSQL_FLAG}\n${until(MYSQL_PLAIN, 'accepted')}`,
};

// Redis: TLS on the same port in place of plain TCP (`port 0`, `tls-port 6379`; a client then uses rediss://). The
// emulator's own commands go through a Unix socket, which TLS does not concern.
const REDIS_FLAG = '/data/.force-ssl';
/** redis-cli on the server's Unix socket, authenticated. */
export const REDIS_CLI = 'redis-cli -s /tmp/redis.sock -a "$ADDON_PASSWORD" --no-auth-warning';
export const REDIS_TLS_ARGS =
  `--unixsocket /tmp/redis.sock --unixsocketperm 700 --tls-cert-file ${CERT} --tls-key-file ${KEY} ` +
  `--tls-auth-clients no $(if [ -f ${REDIS_FLAG} ]; then echo --port 0 --tls-port 6379; else echo --port 6379; fi)`;
const REDIS_PLAIN = 'redis-cli -h 127.0.0.1 -a "$ADDON_PASSWORD" --no-auth-warning ping | grep -q PONG';
export const REDIS_FORCE_SSL: ForceSslScripts = {
  on: `${REDIS_CLI} CONFIG SET port 0 >/dev/null && ${REDIS_CLI} CONFIG SET tls-port 6379 >/dev/null && touch ${REDIS_FLAG}
${until(REDIS_PLAIN, 'refused')}`,
  off: `${REDIS_CLI} CONFIG SET tls-port 0 >/dev/null && ${REDIS_CLI} CONFIG SET port 6379 >/dev/null && rm -f ${REDIS_FLAG}
${until(REDIS_PLAIN, 'accepted')}`,
};
/** Readiness over TCP, with TLS when force-ssl is on (the app's own way in). */
export const REDIS_READY =
  `if [ -f ${REDIS_FLAG} ]; then T='--tls --insecure'; fi; ` +
  'redis-cli $T -h 127.0.0.1 -a "$ADDON_PASSWORD" --no-auth-warning ping | grep -q PONG';
