#!/usr/bin/env bash
# Installs (when missing) and starts the Debian PostgreSQL that the tests and
# the benchmark use at postgresql://postgres@127.0.0.1:5432/test. The machine
# is a throwaway test host: loopback connections are trusted, so no password
# needs to live in the project. Safe to run again: every step checks first.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive

if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /usr/lib/postgresql 2>/dev/null)" ]; then
  echo "installing PostgreSQL from Debian's packages"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib \
    || { echo "could not install PostgreSQL"; exit 1; }
fi

version=$(ls /usr/lib/postgresql | sort -V | tail -n1)
if [ ! -d "/etc/postgresql/$version/main" ]; then
  pg_createcluster "$version" main >/dev/null || { echo "could not create the PostgreSQL cluster"; exit 1; }
fi
conf="/etc/postgresql/$version/main"

# Trust loopback TCP (first matching line wins in pg_hba.conf, so these go on top).
if ! grep -q '^# pgkafka tests' "$conf/pg_hba.conf"; then
  { echo '# pgkafka tests: loopback is trusted on this test machine'
    echo 'host all all 127.0.0.1/32 trust'
    echo 'host all all ::1/128 trust'
    cat "$conf/pg_hba.conf"; } > "$conf/pg_hba.conf.new" && mv "$conf/pg_hba.conf.new" "$conf/pg_hba.conf"
  chown postgres:postgres "$conf/pg_hba.conf"
  restart=1
fi
# Several brokers and clients per test file, two test files at a time.
if ! grep -q '^max_connections = 300' "$conf/postgresql.conf"; then
  sed -i 's/^max_connections = .*/max_connections = 300/' "$conf/postgresql.conf"
  restart=1
fi

if pg_isready -q -h 127.0.0.1 -p 5432; then
  [ "${restart:-0}" = 1 ] && pg_ctlcluster --skip-systemctl-redirect "$version" main restart
else
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
fi
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
pg_isready -q -h 127.0.0.1 -p 5432 || { echo "PostgreSQL did not start"; exit 1; }

psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -qc 'CREATE DATABASE test' \
  || { echo "could not create the test database"; exit 1; }
echo "PostgreSQL $version ready on 127.0.0.1:5432"
