#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: `start DIR` creates a cluster in
# DIR (as the postgres user when run as root, since PostgreSQL refuses root),
# listens on 127.0.0.1 on a free port, and prints its address
# (postgres://postgres@127.0.0.1:PORT/postgres); `stop DIR` stops it.
# `start-tls DIR` makes one as managed services run it: TLS only (a certificate
# authority made here, DIR/ca.pem, signs a certificate for `localhost` alone),
# password authentication (DIR/password), and DIR/other-ca.pem, an authority
# that signed nothing; it prints postgres://localhost:PORT/postgres (PORT also
# in DIR/port).
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x "$bin/initdb" ]] || { echo "PostgreSQL is not installed (scripts/setup.sh --postgres installs it)" >&2; exit 1; }
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
dir=${2:?usage: postgres.sh start|start-tls|stop DIR}
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
  start-tls)
    mkdir -p "$dir"
    cert() { # NAME SUBJECT [CA]: an EC key and certificate, self-signed or signed by CA
      local name=$1 subject=$2 ca=${3:-}
      if [[ -z "$ca" ]]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
          -subj "$subject" -keyout "$dir/$name.key" -out "$dir/$name.pem" 2>/dev/null
      else
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
          -subj "$subject" -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
        openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" \
          -CAcreateserial -days 2 -extfile <(printf 'subjectAltName=DNS:localhost\n') \
          -out "$dir/$name.pem" 2>/dev/null
      fi
    }
    cert ca "/CN=Countersign test CA"
    cert other-ca "/CN=Another CA"
    cert server "/CN=localhost" ca
    # A password with the characters a URL must percent-encode.
    printf '%s' 'pg:s3cret/p@ss%' >"$dir/password"
    [[ $(id -u) -eq 0 ]] && chown -R postgres "$dir"
    chmod 600 "$dir/server.key"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/password" \
      --auth-local=trust --auth-host=scram-sha-256 --no-sync >"$dir/initdb.log" 2>&1
    printf '%s\n' 'local all all trust' 'hostssl all all 127.0.0.1/32 scram-sha-256' \
      'hostssl all all ::1/128 scram-sha-256' >"$dir/data/pg_hba.conf"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=localhost -c ssl=on -c ssl_cert_file=$dir/server.pem -c ssl_key_file=$dir/server.key" \
      start >/dev/null
    echo "$port" >"$dir/port"
    echo "postgres://localhost:$port/postgres"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: postgres.sh start|start-tls|stop DIR" >&2; exit 2 ;;
esac
