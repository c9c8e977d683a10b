#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the class tests' second pass (installs nothing: needs Debian's `postgresql`).
#   eval "$(.ci/postgres.sh start)"   # starts it; prints `export PG_DIR=… DATABASE_URL=…` (messages go to stderr)
#   .ci/postgres.sh stop              # stops the cluster in $PG_DIR and deletes that folder
# Each start makes a new folder (mktemp), so two runs on one machine never meet; it listens on a unix socket in
# that folder only (no TCP, so no port can clash). PG_DIR (start: a folder that must not exist yet) and PG_PORT
# override.
set -euo pipefail

dir="${PG_DIR:-}"
port="${PG_PORT:-54329}"  # names the socket file only
db=dragon_test
bin="${PG_BIN:-$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)}"
[ -x "$bin/pg_ctl" ] || { echo "postgres.sh: no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }

as_owner() {  # PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    if [ -z "$dir" ]; then dir="$(mktemp -d /tmp/dragon-postgres.XXXXXX)"; chmod 700 "$dir"
    elif [ -e "$dir" ]; then echo "postgres.sh: $dir exists (a cluster already running? run: PG_DIR=$dir $0 stop)" >&2; exit 1
    else mkdir -m 700 "$dir"; fi
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -p $port -c fsync=off" start >&2
    as_owner "$bin/createdb" -h "$dir" -p "$port" -U postgres "$db"
    echo "export PG_DIR='$dir' DATABASE_URL='postgresql://postgres@/$db?host=$dir&port=$port'"
    echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $dir (port $port); stop: PG_DIR=$dir $0 stop" >&2
    ;;
  stop)
    if [ -z "$dir" ]; then echo "postgres.sh: stop needs PG_DIR (start printed it)" >&2; exit 1; fi
    if [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
