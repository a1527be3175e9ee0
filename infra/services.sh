#!/usr/bin/env bash
# Makes Redis and PostgreSQL reachable for Flow: reuse a reachable one, else start one, installing
# it from Debian's packages when missing. Idempotent; safe to run before every start and test run.
#   bash infra/services.sh up      # ensure both are up
#   bash infra/services.sh status  # report only
#   bash infra/services.sh test-binaries  # redis-server and PostgreSQL binaries for the fault tests
set -euo pipefail

REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/flow}"

log() { printf '[infra] %s\n' "$*" >&2; }

# host and port from a URL like scheme://user@host:port/db
url_host() { local u="${1#*://}"; u="${u#*@}"; u="${u%%/*}"; echo "${u%%:*}"; }
url_port() { local u="${1#*://}"; u="${u#*@}"; u="${u%%/*}"; if [[ "$u" == *:* ]]; then echo "${u##*:}"; else echo "$2"; fi; }

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

is_local() { [[ "$1" == 127.* || "$1" == localhost || "$1" == "::1" ]]; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

apt_install() {
  log "installing $* from Debian's packages"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_port() {
  local host=$1 port=$2 name=$3
  for _ in $(seq 1 60); do port_open "$host" "$port" && return 0; sleep 0.5; done
  log "$name did not open $host:$port within 30 s"; return 1
}

ensure_redis() {
  local host port; host=$(url_host "$REDIS_URL"); port=$(url_port "$REDIS_URL" 6379)
  if port_open "$host" "$port"; then log "redis reachable at $host:$port"; return 0; fi
  if ! is_local "$host"; then log "redis at $host:$port is not reachable and not local: start it, or set REDIS_URL"; return 1; fi
  command -v redis-server >/dev/null || apt_install redis-server
  log "starting redis-server on $host:$port"
  mkdir -p /tmp/flow-redis
  redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no \
    --dir /tmp/flow-redis --logfile /tmp/flow-redis/redis.log
  wait_port "$host" "$port" redis
}

pg_bin() {
  local v; v=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1)
  [ -n "$v" ] && echo "/usr/lib/postgresql/$v/bin"
}

ensure_postgres() {
  local host port; host=$(url_host "$DATABASE_URL"); port=$(url_port "$DATABASE_URL" 5432)
  if port_open "$host" "$port"; then log "postgresql reachable at $host:$port"; return 0; fi
  if ! is_local "$host"; then log "postgresql at $host:$port is not reachable and not local: start it, or set DATABASE_URL"; return 1; fi
  [ -n "$(pg_bin)" ] || apt_install postgresql
  # A Debian cluster exists after install: start it with the cluster tools when present and it is
  # configured for the port of DATABASE_URL (Debian picks 5433, ... when 5432 is taken).
  local ver="" cport=""
  if command -v pg_ctlcluster >/dev/null && [ -n "$(ls /etc/postgresql 2>/dev/null)" ]; then
    ver=$(ls /etc/postgresql | sort -V | tail -1)
    cport=$(sed -nE 's/^[[:space:]]*port[[:space:]]*=[[:space:]]*([0-9]+).*/\1/p' "/etc/postgresql/$ver/main/postgresql.conf" 2>/dev/null | tail -1)
  fi
  if [ -n "$ver" ] && [ "${cport:-5432}" = "$port" ]; then
    log "starting PostgreSQL cluster $ver/main"
    as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
    if wait_port "$host" "$port" postgresql; then ensure_trust_for_local; return 0; fi
  fi
  # Fall back to a private cluster owned by the postgres user, trust auth on loopback.
  local bin dir=/tmp/flow-pg; bin=$(pg_bin)
  if [ ! -f "$dir/PG_VERSION" ]; then
    log "initialising a private PostgreSQL cluster in $dir"
    mkdir -p "$dir"; chown postgres:postgres "$dir" 2>/dev/null || true
    as_pg "$bin/initdb" -D "$dir" -U postgres --auth=trust >/dev/null
  fi
  log "starting private PostgreSQL on $host:$port"
  as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -o "-c listen_addresses=$host -p $port -k /tmp" start >/dev/null
  wait_port "$host" "$port" postgresql
}

as_pg() { if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then (cd / && su postgres -c "$(printf '%q ' "$@")"); else "$@"; fi; }

# The default URL connects as postgres without a password; a fresh Debian cluster wants md5/peer
# on TCP. Switch loopback lines to trust only on a cluster this script itself started.
ensure_trust_for_local() {
  local hba; hba=$(ls /etc/postgresql/*/main/pg_hba.conf 2>/dev/null | sort -V | tail -1)
  [ -n "$hba" ] || return 0
  if ! grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
    log "allowing trust auth on loopback in $hba (local development cluster)"
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    as_root pg_ctlcluster --skip-systemctl-redirect "$(basename "$(dirname "$(dirname "$hba")")")" main reload || true
  fi
}

# The fault tests start private redis-server and PostgreSQL instances on other ports: their binaries
# must be on this machine even when the shared servers run elsewhere (reached, not started, by `up`).
ensure_test_binaries() {
  command -v redis-server >/dev/null || apt_install redis-server
  [ -n "$(pg_bin)" ] || apt_install postgresql
}

case "${1:-up}" in
  up) ensure_redis; ensure_postgres ;;
  test-binaries) ensure_test_binaries ;;
  status)
    port_open "$(url_host "$REDIS_URL")" "$(url_port "$REDIS_URL" 6379)" && log "redis up" || log "redis down"
    port_open "$(url_host "$DATABASE_URL")" "$(url_port "$DATABASE_URL" 5432)" && log "postgresql up" || log "postgresql down" ;;
  *) echo "usage: infra/services.sh up|status|test-binaries" >&2; exit 2 ;;
esac
