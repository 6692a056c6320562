// The stacks' `dbclient-fetcher` (issue #22). The Go CLI's database consoles run
// `dbclient-fetcher <kind> && <client> …` in an attached one-off of the app (Scalingo/cli db/*_console.go:
// kinds `pgsql`, `mysql`, `redis`, `mongo`, `influxdb`). The platform's downloads the client at run time into
// $HOME/bin and prints "---> Download and extract the database CLI", "---> Database CLI installed:" and the
// client's version (Scalingo's documentation, "Manually install the databases CLI in one-off"). The emulator's
// stacks carry Debian's clients instead: this script only checks the kind and says which client is there.

/** Debian packages of the clients the consoles run: psql, mysql (MariaDB's), redis-cli. */
export const DATABASE_CLIENT_PACKAGES = ['postgresql-client', 'mariadb-client-core', 'redis-tools'];

export const DBCLIENT_FETCHER_PATH = '/usr/local/bin/dbclient-fetcher';

const SCRIPT = [
  '#!/bin/sh',
  '# dbclient-fetcher of the Scalingo emulator: the database clients come with the stack image (Debian packages).',
  'case "$1" in',
  '  pgsql|psql|postgresql|postgres|postgis) client="psql --version" ;;',
  '  mysql|mariadb) client="mysql --version" ;;',
  '  redis) client="redis-cli --version" ;;',
  '  "") echo "usage: dbclient-fetcher <pgsql|mysql|redis> [version]" >&2; exit 2 ;;',
  '  *) echo "dbclient-fetcher: the stacks of the emulator have no $1 client (they have pgsql, mysql and redis)" >&2; exit 1 ;;',
  'esac',
  'if [ -n "$2" ]; then echo "---> Version $2 is not downloaded locally: the stack has the client of its Debian release"; fi',
  'echo "---> Database CLI installed:"',
  'exec $client',
];

/** Single-quotes a word for sh. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Customize commands (run in the image's root filesystem) that install the script. */
export function dbclientFetcherInstall(): string[] {
  return [
    `printf '%s\\n' ${SCRIPT.map(shellQuote).join(' ')} > ${DBCLIENT_FETCHER_PATH}`,
    `chmod 755 ${DBCLIENT_FETCHER_PATH}`,
    // MariaDB 11 (Debian trixie) moved the `mysql` name to mariadb-client-compat: the MySQL console runs `mysql`.
    '[ -e /usr/bin/mysql ] || ln -s mariadb /usr/bin/mysql',
  ];
}
