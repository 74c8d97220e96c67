#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster and Redis server up, for
# the storage tests and benchmarks: both in a temporary directory, listening
# on free loopback ports, stopped (by their own pids) when the command ends,
# also when it fails. The command gets ACC_PG_URL and ACC_REDIS_URL.
# Usage: scripts/with-servers.sh COMMAND [ARG...]
# `scripts/setup.sh --servers` installs Debian's postgresql and redis-server.
set -euo pipefail

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

dir=$(mktemp -d -t acc-servers-XXXXXX)
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pg_bin/initdb" ] || { echo "with-servers: PostgreSQL not found (run scripts/setup.sh --servers)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "with-servers: redis-server not found (run scripts/setup.sh --servers)" >&2; exit 1; }

# PostgreSQL refuses to run as root: as root, the cluster belongs to `postgres`.
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$dir"
  as_owner=(runuser -u postgres --)
fi
pg_port=$(free_port)
redis_port=$(free_port)

stop() {
  status=$?
  "${as_owner[@]}" "$pg_bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  if [ -f "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
  rm -rf "$dir"
  exit "$status"
}
trap stop EXIT INT TERM

"${as_owner[@]}" "$pg_bin/initdb" -D "$dir/data" -A trust -U app --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
"${as_owner[@]}" "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w \
  -o "-p $pg_port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
  { cat "$dir/pg.log" >&2; exit 1; }
# noeviction: the session heads and events must never be evicted (README).
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
  --maxmemory-policy noeviction --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir"
for _ in $(seq 50); do
  [ -s "$dir/redis.pid" ] && redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done

export ACC_PG_URL="postgres://app@127.0.0.1:$pg_port/postgres"
export ACC_REDIS_URL="redis://127.0.0.1:$redis_port"
"$@"
