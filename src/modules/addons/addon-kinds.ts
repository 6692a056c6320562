// What each real addon kind is (issue #15): the image recipe its server runs on, the port, the
// script that initialises the data volume on first start then runs the server in the foreground,
// the readiness probe, the app variables it sets, and its backup command. Names of the variables
// as the platform sets them: SCALINGO_<TYPE>_URL, plus DATABASE_URL (PostgreSQL) and REDIS_URL
// (docs/fidelity.md "Real addons").

import { PITR_AT_START, PITR_SERVER_ARGS } from './addon-pitr-scripts.ts';
import {
  type ForceSslScripts,
  MYSQL_FORCE_SSL,
  MYSQL_TLS_ARGS,
  PG_FORCE_SSL,
  REDIS_CLI,
  REDIS_FORCE_SSL,
  REDIS_READY,
  REDIS_TLS_ARGS,
} from './addon-tls-scripts.ts';

export type AddonKind = 'postgresql' | 'mysql' | 'redis';

export interface Credentials {
  username: string;
  password: string;
  database: string;
}

export interface KindSpec {
  kind: AddonKind;
  recipe: string;
  port: number;
  /** Where the volume is mounted. */
  dataDir: string;
  /** Runs as root: prepares the volume, initialises it once, then execs the server as its own user. */
  script: (memoryBytes: number) => string;
  /** A command that exits 0 once the server accepts connections with the app's credentials. */
  ready: string[];
  url: (c: Credentials, host: string, port: number) => string;
  variables: string[];
  /** A dump of the database on stdout (backups), and the file name it is served as. */
  backup: { cmd: string[]; file: string };
  /** Shell lines writing the backup's dump into the directory "$OUT" (the database API's backups archive it). */
  archive: string;
  /**
   * Bash lines (run under `set -eo pipefail`) loading a backup's dump into the running server (issue 22: restore),
   * as the platform's documentation restores one by hand; the backup archive (tar.gz) arrives on stdin.
   */
  restore: string;
  /** Prints the server's users, one a line: `name|password encryption|ro` (encryption and `ro` may be empty). */
  users: string[];
  /**
   * Shell scripts creating / dropping a user named $NEW_USER (password $NEW_PASSWORD, read-only when $READ_ONLY=1);
   * absent when the kind has no user management. Values come from the environment, never spliced into SQL
   * text by the emulator (psql quotes its variables; the route allows only safe characters for MariaDB).
   */
  createUser?: string;
  deleteUser?: string;
  /** Sets the password of user $NEW_USER to $NEW_PASSWORD (issue 22: update and reset). */
  setPassword?: string;
  /** Shell scripts making the server refuse, then accept again, connections without TLS (feature force-ssl); absent: no TLS. */
  forceSsl?: ForceSslScripts;
}

const PG = '/usr/lib/postgresql/15/bin';
const MiB = 1024 * 1024;

export const ADDON_KINDS: Record<AddonKind, KindSpec> = {
  postgresql: {
    kind: 'postgresql',
    recipe: 'postgresql',
    port: 5432,
    dataDir: '/var/lib/postgresql/data',
    script: (mem) => String.raw`set -e
D=/var/lib/postgresql/data/pgdata
mkdir -p "$D" /var/run/postgresql && chown -R postgres:postgres /var/lib/postgresql/data /var/run/postgresql && chmod 700 "$D"
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$D/PG_VERSION" ]; then
  echo "addon: initialising the database cluster"
  printf '%s\n' "$ADDON_PASSWORD" > /tmp/pw && chown postgres /tmp/pw
  as_pg ${PG}/initdb -D "$D" -U postgres --pwfile=/tmp/pw --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$D/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$D/pg_hba.conf"
  as_pg ${PG}/pg_ctl -D "$D" -o "-c listen_addresses=''" -w start >/dev/null
  as_pg ${PG}/psql -q -v ON_ERROR_STOP=1 -U postgres -d postgres -c "CREATE ROLE \"$ADDON_USER\" LOGIN PASSWORD \
'$ADDON_PASSWORD'" -c "CREATE DATABASE \"$ADDON_DATABASE\" OWNER \"$ADDON_USER\""
  as_pg ${PG}/pg_ctl -D "$D" -m fast -w stop >/dev/null
  echo "addon: database $ADDON_DATABASE created"
fi
${PITR_AT_START}exec setpriv --reuid=postgres --regid=postgres --init-groups ${PG}/postgres -D "$D" -c listen_addresses='*' -c \
shared_buffers=${Math.max(16, Math.floor(mem / MiB / 8))}MB -c log_line_prefix='[%p] ' ${PITR_SERVER_ARGS} \
  -c ssl=on -c ssl_cert_file=/etc/ssl/certs/ssl-cert-snakeoil.pem -c ssl_key_file=/etc/ssl/private/ssl-cert-snakeoil.key
`,
    ready: [
      'sh',
      '-c',
      // Ready once it takes writes: a point-in-time recovery answers reads before it is promoted.
      `${PG}/pg_isready -q -h 127.0.0.1 -p 5432 && PGPASSWORD="$ADDON_PASSWORD" ${PG}/psql -h 127.0.0.1 -U \
"$ADDON_USER" -d "$ADDON_DATABASE" -tAc 'SELECT NOT pg_is_in_recovery()' | grep -qx t`,
    ],
    // No `?sslmode=`: node-postgres reads prefer/require as verify-full, which the server's self-signed
    // (Debian snakeoil) certificate fails; libpq clients still negotiate TLS by default.
    url: (c, host, port) => `postgres://${c.username}:${c.password}@${host}:${port}/${c.database}`,
    variables: ['SCALINGO_POSTGRESQL_URL', 'DATABASE_URL'],
    backup: {
      cmd: ['sh', '-c', `${PG}/pg_dump -U postgres -d "$ADDON_DATABASE" --no-owner | gzip`],
      file: 'dump.sql.gz',
    },
    // The custom format (.pgsql), as the platform's backups: pg_restore reads it (docs/fidelity.md).
    archive: `${PG}/pg_dump -U postgres -d "$ADDON_DATABASE" --format=custom --no-owner --no-privileges -f "$OUT/$ADDON_DATABASE.pgsql"`,
    // The platform's documented restore (pg_restore --clean --if-exists --no-owner --no-privileges), as the addon's user.
    // The dump is read as it comes out of the archive (pg_restore of a custom-format stream: no copy on disk).
    restore: String.raw`{ tar xzOf - --wildcards '*.pgsql' || { echo "the backup holds no .pgsql dump" >&2; exit 2; }; } |
  ${PG}/pg_restore --clean --if-exists --no-owner --no-privileges --no-comments --exit-on-error -U "$ADDON_USER" -d "$ADDON_DATABASE"`,
    users: [
      'sh',
      '-c',
      `${PG}/psql -U postgres -d postgres -tAF '|' -c "SELECT rolname, CASE WHEN rolpassword LIKE 'SCRAM-SHA-256%' \
THEN 'scram-sha-256' WHEN rolpassword LIKE 'md5%' THEN 'md5' ELSE '' END, CASE WHEN pg_has_role(oid, \
'pg_read_all_data', 'MEMBER') AND NOT pg_has_role(oid, 'pg_write_all_data', 'MEMBER') THEN 'ro' ELSE '' END FROM \
pg_authid WHERE rolcanlogin ORDER BY rolname"`,
    ],
    createUser: String.raw`set -e
if [ "$READ_ONLY" = 1 ]; then G='GRANT pg_read_all_data TO :"u";'; else \
G='GRANT pg_read_all_data, pg_write_all_data TO :"u"; GRANT CREATE ON SCHEMA public TO :"u";'; fi
${PG}/psql -q -v ON_ERROR_STOP=1 -U postgres -d "$ADDON_DATABASE" -v u="$NEW_USER" -v pw="$NEW_PASSWORD" -v db="$ADDON_DATABASE" <<EOF
CREATE ROLE :"u" LOGIN PASSWORD :'pw';
GRANT CONNECT ON DATABASE :"db" TO :"u";
$G
EOF`,
    deleteUser: String.raw`set -e
${PG}/psql -q -v ON_ERROR_STOP=1 -U postgres -d "$ADDON_DATABASE" -v u="$NEW_USER" <<'EOF'
DROP OWNED BY :"u";
DROP ROLE :"u";
EOF`,
    forceSsl: PG_FORCE_SSL,
    setPassword: String.raw`${PG}/psql -q -v ON_ERROR_STOP=1 -U postgres -d postgres -v u="$NEW_USER" -v pw="$NEW_PASSWORD" <<'EOF'
ALTER ROLE :"u" PASSWORD :'pw';
EOF`,
  },
  mysql: {
    kind: 'mysql',
    recipe: 'mysql',
    port: 3306,
    dataDir: '/var/lib/mysql',
    script: (mem) => String.raw`set -e
mkdir -p /run/mysqld && chown -R mysql:mysql /var/lib/mysql /run/mysqld
if [ ! -d /var/lib/mysql/mysql ]; then
  echo "addon: initialising the data directory"
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql --auth-root-authentication-method=socket --skip-test-db >/dev/null
  mariadbd --user=mysql --skip-networking --socket=/run/mysqld/init.sock &
  for i in $(seq 1 60); do mariadb -S /run/mysqld/init.sock -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
  mariadb -S /run/mysqld/init.sock -e "CREATE DATABASE \`$ADDON_DATABASE\`; CREATE USER '$ADDON_USER'@'%' \
IDENTIFIED BY '$ADDON_PASSWORD'; GRANT ALL ON \`$ADDON_DATABASE\`.* TO '$ADDON_USER'@'%'; FLUSH PRIVILEGES;"
  mariadb-admin -S /run/mysqld/init.sock shutdown
  wait
  echo "addon: database $ADDON_DATABASE created"
fi
exec mariadbd --user=mysql --bind-address=0.0.0.0 --port=3306 --innodb-buffer-pool-size=${Math.max(16, Math.floor(mem / MiB / 4))}M \
${MYSQL_TLS_ARGS} --log-error=
`,
    ready: [
      'sh',
      '-c',
      // Over TLS (the client's default when the server offers it), which force-ssl requires.
      'mariadb --ssl -h 127.0.0.1 -u "$ADDON_USER" -p"$ADDON_PASSWORD" "$ADDON_DATABASE" -e "SELECT 1" >/dev/null 2>&1',
    ],
    url: (c, host, port) => `mysql://${c.username}:${c.password}@${host}:${port}/${c.database}`,
    variables: ['SCALINGO_MYSQL_URL'],
    backup: { cmd: ['sh', '-c', 'mariadb-dump --single-transaction "$ADDON_DATABASE" | gzip'], file: 'dump.sql.gz' },
    archive: 'mariadb-dump --single-transaction "$ADDON_DATABASE" > "$OUT/$ADDON_DATABASE.sql"',
    // mariadb-dump writes DROP TABLE IF EXISTS before each table: replaying it puts the tables back as they were.
    restore: String.raw`{ tar xzOf - --wildcards '*.sql' || { echo "the backup holds no .sql dump" >&2; exit 2; }; } | mariadb "$ADDON_DATABASE"`,
    // Read-only: SELECT without INSERT on the addon's database (what createUser grants with READ_ONLY=1).
    users: [
      'sh',
      '-c',
      `mariadb -N -B -e "SELECT DISTINCT CONCAT(u.User, '||', IF(d.Select_priv = 'Y' AND d.Insert_priv = 'N', \
'ro', '')) FROM mysql.user u LEFT JOIN mysql.db d ON d.User = u.User AND d.Db = '$ADDON_DATABASE' WHERE u.User <> \
'' ORDER BY 1"`,
    ],
    createUser: String.raw`set -e
if [ "$READ_ONLY" = 1 ]; then P=SELECT; else P=ALL; fi
mariadb -e "CREATE USER '$NEW_USER'@'%' IDENTIFIED BY '$NEW_PASSWORD'; GRANT $P ON \`$ADDON_DATABASE\`.* TO '$NEW_USER'@'%'; FLUSH PRIVILEGES;"`,
    deleteUser: String.raw`mariadb -e "DROP USER '$NEW_USER'@'%'; FLUSH PRIVILEGES;"`,
    setPassword: String.raw`mariadb -e "ALTER USER '$NEW_USER'@'%' IDENTIFIED BY '$NEW_PASSWORD'; FLUSH PRIVILEGES;"`,
    forceSsl: MYSQL_FORCE_SSL,
  },
  redis: {
    kind: 'redis',
    recipe: 'redis',
    port: 6379,
    dataDir: '/data',
    script: (mem) => String.raw`set -e
exec redis-server --bind 0.0.0.0 --dir /data --appendonly yes --enable-debug-command local \
--requirepass "$ADDON_PASSWORD" --maxmemory ${Math.floor((mem * 0.8) / MiB)}mb --save 60 1 ${REDIS_TLS_ARGS}
`,
    ready: ['sh', '-c', REDIS_READY],
    url: (c, host, port) => `redis://:${c.password}@${host}:${port}`,
    variables: ['SCALINGO_REDIS_URL', 'REDIS_URL'],
    // An RDB snapshot taken now (SAVE), then copied out.
    backup: {
      cmd: ['sh', '-c', `${REDIS_CLI} save >/dev/null && cat /data/dump.rdb | gzip`],
      file: 'dump.rdb.gz',
    },
    archive: `${REDIS_CLI} save >/dev/null && cp /data/dump.rdb "$OUT/dump.rdb"`,
    // The snapshot replaces the data set: AOF off, the RDB file swapped and loaded (DEBUG RELOAD NOSAVE, allowed
    // from inside the container only), AOF on again (rewritten from the loaded data); done once the rewrite ends.
    restore: String.raw`IN=$(mktemp -d)
trap 'rm -rf "$IN"' EXIT
tar xzf - -C "$IN"
[ -s "$IN/dump.rdb" ] || { echo "the backup holds no dump.rdb" >&2; exit 2; }
R() { ${REDIS_CLI} "$@"; }
R CONFIG SET appendonly no >/dev/null
cp "$IN/dump.rdb" /data/dump.rdb
R DEBUG RELOAD NOSAVE | grep -q OK || { echo "redis did not load the snapshot" >&2; R CONFIG SET appendonly yes >/dev/null; exit 1; }
R CONFIG SET appendonly yes >/dev/null
for i in $(seq 1 600); do R INFO persistence | grep -q 'aof_rewrite_in_progress:0' && R INFO persistence | grep -q \
'aof_rewrite_scheduled:0' && break; sleep 0.2; done`,
    // Redis 6+ ACL users (the server runs with `requirepass` only: the `default` user).
    users: ['sh', '-c', `${REDIS_CLI} ACL USERS | sed "s/$/|/"`],
    forceSsl: REDIS_FORCE_SSL,
  },
};

/** The addon kind served by a provider id (scalingo-postgresql…, or a dedicated database's postgresql-ng), if it runs a real server. */
export function kindOfProvider(providerId: string): KindSpec | undefined {
  const k = providerId.replace(/^scalingo-/, '').replace(/-ng$/, '') as AddonKind;
  return ADDON_KINDS[k];
}

/** Memory of a plan: the size in its name (…-512 → 512 MiB, …-1024 → 1 GiB), 256 MiB for sandboxes. */
export function planMemoryBytes(planName: string): number {
  const m = /-(\d{2,5})$/.exec(planName);
  return (m ? Number(m[1]) : 256) * MiB;
}
