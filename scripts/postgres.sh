#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: `start DIR` creates a cluster in
# DIR (as the postgres user when run as root, since PostgreSQL refuses root),
# listens on 127.0.0.1 on a free port, and prints its address
# (postgres://postgres@127.0.0.1:PORT/postgres); `stop DIR` stops it.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x "$bin/initdb" ]] || { echo "PostgreSQL is not installed (scripts/setup.sh --postgres installs it)" >&2; exit 1; }
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
dir=${2:?usage: postgres.sh start|stop DIR}
case "$1" in
  start)
    mkdir -p "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync >"$dir/initdb.log" 2>&1
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on" start >/dev/null
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: postgres.sh start|stop DIR" >&2; exit 2 ;;
esac
