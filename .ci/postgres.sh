#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the class tests' second pass (installs nothing: needs Debian's `postgresql`).
#   eval "$(.ci/postgres.sh start)"   # starts it; prints `export DATABASE_URL=…` (messages go to stderr)
#   .ci/postgres.sh stop              # stops it and deletes its folder
# It listens on a unix socket in its own folder only (no TCP, so no port can clash); PG_DIR and PG_PORT override.
set -euo pipefail

dir="${PG_DIR:-/tmp/dragon-postgres}"
port="${PG_PORT:-54329}"  # names the socket file only
db=dragon_test
bin="${PG_BIN:-$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)}"
[ -x "$bin/pg_ctl" ] || { echo "postgres.sh: no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }

as_owner() {  # PostgreSQL refuses to run as root: as root, run its tools as the `postgres` user
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    if [ -e "$dir" ]; then echo "postgres.sh: $dir exists (a cluster already running? run: $0 stop)" >&2; exit 1; fi
    mkdir -m 700 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -p $port -c fsync=off" start >&2
    as_owner "$bin/createdb" -h "$dir" -p "$port" -U postgres "$db"
    echo "export DATABASE_URL='postgresql://postgres@/$db?host=$dir&port=$port'"
    echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $dir (port $port); stop: $0 stop" >&2
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
