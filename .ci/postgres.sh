#!/usr/bin/env bash
# Starts a throwaway local PostgreSQL for the user-store tests and prints, on stdout, one line:
#
#   export CAPREG_TEST_PG_URL='postgres://capreg:<password>@127.0.0.1:<port>/capreg_test'
#
# so that CI can run:
#
#   pg_env=$(bash .ci/postgres.sh) && eval "$pg_env"
#
# (a plain `eval "$(bash .ci/postgres.sh)"` works too, but hides a failure from `set -e`: eval of
# an empty string succeeds).
# Everything else (progress, errors) goes to stderr. Under GitHub Actions the URL is also appended
# to $GITHUB_ENV.
#
# Works on a fresh Debian machine as root: installs PostgreSQL from the Debian packages when no
# server binaries are found (without creating or starting the distribution's own cluster), then
# initialises a cluster owned by the `postgres` user in a scratch folder and starts it on a free
# loopback port (54329 unless taken). Idempotent: a second run reuses the running cluster and only
# prints the URL again; a stopped one is restarted.
#
#   bash .ci/postgres.sh          start (or reuse) and print the export line
#   bash .ci/postgres.sh stop     stop the cluster and delete its folder
#
# Environment: CAPREG_PG_DIR (default ${TMPDIR:-/tmp}/capreg-pg), CAPREG_PG_PORT (default 54329).
# The cluster trades durability for speed (fsync off): it is for tests only.
set -euo pipefail

PG_DIR=${CAPREG_PG_DIR:-${TMPDIR:-/tmp}/capreg-pg}
FIRST_PORT=${CAPREG_PG_PORT:-54329}
DB_NAME=capreg_test
DB_USER=capreg
DATA=$PG_DIR/data
SOCK=$PG_DIR/sock

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The folder that holds pg_ctl, initdb and postgres together. Debian keeps them off PATH, in
# /usr/lib/postgresql/<major>/bin; PATH wins when it has a complete set.
find_bindir() {
  local candidate dir
  if candidate=$(command -v pg_ctl 2>/dev/null); then
    dir=$(dirname "$(readlink -f "$candidate")")
    if [[ -x $dir/initdb && -x $dir/postgres ]]; then
      printf '%s\n' "$dir"
      return 0
    fi
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4 -n -r); do
    if [[ -x $dir/pg_ctl && -x $dir/initdb && -x $dir/postgres ]]; then
      printf '%s\n' "$dir"
      return 0
    fi
  done
  return 1
}

install_postgres() {
  [[ $(id -u) -eq 0 ]] || die "PostgreSQL is not installed and this is not root: install the 'postgresql' package, or put pg_ctl/initdb/postgres on PATH"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is missing: install PostgreSQL, or put pg_ctl/initdb/postgres on PATH"
  log "installing PostgreSQL from the Debian packages"
  # The package would otherwise initialise and try to start its own 'main' cluster: not needed here.
  mkdir -p /etc/postgresql-common/createcluster.d
  printf 'create_main_cluster = false\n' >/etc/postgresql-common/createcluster.d/capreg-ci.conf
  export DEBIAN_FRONTEND=noninteractive
  # unsafe-io: no fsync per unpacked file; the machine is throwaway and it saves most of the time.
  local apt_opts=(-y -q --no-install-recommends -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-unsafe-io)
  # Fresh images ship without package lists; an outdated list gives 404s. Either way: update, retry.
  if ! apt-get install "${apt_opts[@]}" postgresql >&2; then
    apt-get update -q >&2
    apt-get install "${apt_opts[@]}" postgresql >&2
  fi
}

# Runs a command as the user that owns the cluster (initdb and postgres refuse to run as root).
# fd 9 (the lock) is closed so that the server, which outlives this script, does not keep holding it.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u "$OWNER" -- "$@" 9>&-
  else
    "$@" 9>&-
  fi
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

server_running() { [[ -f $PG_DIR/port ]] && "$BIN/pg_isready" -q -h "$SOCK" -p "$(cat "$PG_DIR/port")" >/dev/null 2>&1; }

psql_admin() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U "$DB_USER" -d postgres "$@"; }

stop_cluster() {
  if [[ -f $DATA/postmaster.pid ]]; then
    local bin data_owner
    bin=$(find_bindir) || die "cannot stop $DATA: PostgreSQL binaries not found"
    data_owner=$(stat -c %U "$DATA")
    if [[ $(id -u) -eq 0 ]]; then
      runuser -u "$data_owner" -- "$bin/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 9>&- || true
    else
      "$bin/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 9>&- || true
    fi
  fi
  rm -rf "$PG_DIR"
  log "stopped and removed $PG_DIR"
}

init_cluster() {
  log "initialising a cluster in $DATA"
  rm -rf "$DATA"
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$PG_DIR/password"
  chmod 600 "$PG_DIR/password"
  chown "$OWNER" "$PG_DIR/password"
  as_owner "$BIN/initdb" -D "$DATA" -U "$DB_USER" --pwfile="$PG_DIR/password" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-locale --no-sync >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; die "initdb failed"; }
  cat >>"$DATA/postgresql.conf" <<EOF

# capreg CI: a throwaway cluster, loopback only, speed over durability
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
}

start_cluster() {
  PORT=$FIRST_PORT
  local last=$((FIRST_PORT + 50))
  while port_busy "$PORT"; do
    PORT=$((PORT + 1))
    ((PORT <= last)) || die "no free loopback port in $FIRST_PORT-$last"
  done
  log "starting PostgreSQL $(cat "$DATA/PG_VERSION") on 127.0.0.1:$PORT"
  if ! as_owner "$BIN/pg_ctl" -D "$DATA" -l "$PG_DIR/server.log" -o "-p $PORT" -w -t 60 start >/dev/null 2>&1; then
    tail -n 30 "$PG_DIR/server.log" >&2 || true
    die "PostgreSQL did not start (log: $PG_DIR/server.log)"
  fi
  printf '%s\n' "$PORT" >"$PG_DIR/port"
}

# Two CI steps calling this script at once must not both initialise the same folder.
[[ $# -le 1 ]] || die "usage: postgres.sh [start|stop]"
mkdir -p "$(dirname "$PG_DIR")"
exec 9>"$PG_DIR.lock"
flock -w 120 9 || die "another postgres.sh holds $PG_DIR.lock"

case ${1:-start} in
  start) ;;
  stop) stop_cluster; exit 0 ;;
  *) die "usage: postgres.sh [start|stop]" ;;
esac

BIN=$(find_bindir) || { install_postgres; BIN=$(find_bindir) || die "PostgreSQL binaries not found after installing"; }

if [[ $(id -u) -eq 0 ]]; then
  OWNER=postgres
  if ! id "$OWNER" >/dev/null 2>&1; then
    OWNER=capreg-pg
    id "$OWNER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$OWNER"
  fi
else
  OWNER=$(id -un)
fi

mkdir -p "$PG_DIR" "$SOCK"
chmod 700 "$PG_DIR"
[[ $(id -u) -ne 0 ]] || chown -R "$OWNER" "$PG_DIR"

if server_running; then
  PORT=$(cat "$PG_DIR/port")
  log "reusing the running cluster on 127.0.0.1:$PORT"
else
  if [[ -f $DATA/postmaster.pid ]]; then
    # Left by a crash or a reboot, or a server that does not answer: start from a clean slate.
    as_owner "$BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  major=$("$BIN/pg_ctl" --version | grep -oE '[0-9]+' | head -n 1)
  if [[ ! -f $PG_DIR/password || ! -f $DATA/PG_VERSION || $(cat "$DATA/PG_VERSION") != "$major" ]]; then
    init_cluster
  fi
  start_cluster
fi

if [[ -z $(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'") ]]; then
  psql_admin -c "CREATE DATABASE $DB_NAME" >/dev/null
fi

URL="postgres://$DB_USER:$(cat "$PG_DIR/password")@127.0.0.1:$PORT/$DB_NAME"
printf '%s\n' "$URL" >"$PG_DIR/url"
if [[ -n ${GITHUB_ENV:-} ]]; then
  printf 'CAPREG_TEST_PG_URL=%s\n' "$URL" >>"$GITHUB_ENV"
fi
log "ready: database $DB_NAME on 127.0.0.1:$PORT (URL also in $PG_DIR/url)"
printf "export CAPREG_TEST_PG_URL='%s'\n" "$URL"
