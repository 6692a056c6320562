// Point-in-time recovery of PostgreSQL servers (issue 22), as shell run in the server's container. The
// platform keeps a base backup and the write-ahead log (doc.scalingo.com/databases/postgresql/backing-up);
// so does the addon's volume, under /var/lib/postgresql/data/pitr: `enabled` (the archive command keeps WAL
// only once PITR is on for the plan), `wal/` (each finished segment, gzipped), `base/` (one base backup and
// the time it ended, `done-at`) and `restore-to` (a recovery asked for: the next start replays to it).

const PG = '/usr/lib/postgresql/15/bin';
const P = '/var/lib/postgresql/data/pitr';
const AS_PG = 'setpriv --reuid=postgres --regid=postgres --init-groups';

/** Server options: every finished WAL segment goes to the archive command (which keeps it when PITR is on). */
export const PITR_SERVER_ARGS = "-c archive_mode=on -c archive_command='sh /tmp/pitr-archive %p %f'";

/**
 * Start script lines (root, `$D` the data directory, `set -e`): the archive and fetch commands, then, when a
 * recovery was asked for, the base backup extracted beside the data, swapped in and set to replay the archived
 * WAL up to the time asked, then promote. The request is removed first: a failure never loops.
 */
export const PITR_AT_START = String.raw`cat > /tmp/pitr-archive <<'PITR'
[ -f ${P}/enabled ] || exit 0
gzip -c "$1" > "${P}/wal/$2.part" && mv "${P}/wal/$2.part" "${P}/wal/$2.gz"
PITR
cat > /tmp/pitr-fetch <<'PITR'
f="${P}/wal/$1.gz"
[ -f "$f" ] && gunzip -c "$f" > "$2"
PITR
if [ -f ${P}/restore-to ] && [ -f ${P}/base/base.tar.gz ]; then
  T=$(cat ${P}/restore-to)
  rm -f ${P}/restore-to
  echo "addon: point-in-time recovery to $T: the base backup, then the archived write-ahead log"
  rm -rf "$D.pitr" && mkdir -p "$D.pitr" && tar xzf ${P}/base/base.tar.gz -C "$D.pitr"
  touch "$D.pitr/recovery.signal"
  printf "restore_command = 'sh /tmp/pitr-fetch %%f %%p'\nrecovery_target_time = '%s'\nrecovery_target_action = 'promote'\n" \
"$T" >> "$D.pitr/postgresql.auto.conf"
  chown -R postgres:postgres "$D.pitr" && chmod 700 "$D.pitr"
  rm -rf "$D" && mv "$D.pitr" "$D"
fi
`;

/** Turns PITR on (root, in the running server): archiving kept from now, and one base backup. Idempotent. */
export const PITR_ENABLE = String.raw`set -e
[ -f ${P}/base/done-at ] && exit 0
[ "$(${AS_PG} ${PG}/psql -U postgres -d postgres -tAc 'SHOW archive_mode')" = on ] || \
{ echo "the server was started without WAL archiving" >&2; exit 3; }
mkdir -p ${P}/wal && touch ${P}/enabled && chown -R postgres:postgres ${P}
rm -rf ${P}/base.tmp
${AS_PG} ${PG}/pg_basebackup -D ${P}/base.tmp -Ft -z -X none -U postgres
date -u +%s > ${P}/base.tmp/done-at
mv ${P}/base.tmp ${P}/base
`;

/** Prints the end of the base backup (seconds since the epoch), nothing when there is none. */
export const PITR_BASE_TIME = `cat ${P}/base/done-at 2>/dev/null || true`;

/**
 * Prepares a recovery to $TARGET (root, in the running server): a commit written now (recovery stops at the
 * first commit after the target, so one must follow it), the WAL segment switched and waited for in the
 * archive, then the request for the next start.
 */
export const PITR_PREPARE = String.raw`set -e
[ -f ${P}/base/base.tar.gz ] || { echo "no base backup: point-in-time recovery is not on for this database" >&2; exit 2; }
q() { ${AS_PG} ${PG}/psql -U postgres -d postgres -v ON_ERROR_STOP=1 -tAc "$1"; }
q 'SELECT txid_current()' >/dev/null
SEG=$(q 'SELECT pg_walfile_name(pg_switch_wal())')
i=0
while [ ! -f "${P}/wal/$SEG.gz" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "${P}/wal/$SEG.gz" ] || { echo "the write-ahead log was not archived within 60 s" >&2; exit 3; }
printf '%s\n' "$TARGET" > ${P}/restore-to
`;
