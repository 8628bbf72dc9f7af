#!/usr/bin/env bash
# Installs (when missing) and starts what `npm run bench` measures against:
# the local PostgreSQL (scripts/local-postgres.sh), Redis on 127.0.0.1:6379
# and NATS with JetStream on 127.0.0.1:4222 (the `peers` section). Each is
# started only when nothing answers on its port; they run until the machine
# stops them.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
cd "$(dirname "$0")/.."

bash scripts/local-postgres.sh || exit 1

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || { echo "could not install ${missing[*]}"; exit 1; }
fi

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_for() { for _ in $(seq 1 30); do listening "$1" && return 0; sleep 0.5; done; echo "$2 did not start"; return 1; }

state=${TMPDIR:-/tmp}/pgkafka-bench-services
mkdir -p "$state"
if ! listening 6379; then
  # The machine-wide Redis as Debian configures it: no fsync per write (the peers section starts a durable one itself).
  redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --dir "$state" --logfile "$state/redis.log"
  wait_for 6379 "Redis" || exit 1
fi
if ! listening 4222; then
  nohup nats-server -a 127.0.0.1 -p 4222 -js -sd "$state/jetstream" > "$state/nats.log" 2>&1 &
  wait_for 4222 "NATS" || exit 1
fi
echo "bench services ready: PostgreSQL 5432, Redis 6379, NATS 4222"
