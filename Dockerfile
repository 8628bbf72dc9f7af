# pgkafka as an image: `docker build -t pgkafka .`, then see docker-compose.yml.
# The build fetches packages from npm and Debian only: the one native module
# without a binary in the npm registry (zstd-napi) is compiled from source
# against the Node headers that ship in the base image, never downloaded.
FROM node:20-bookworm-slim AS dependencies
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
ENV npm_config_build_from_source=true \
    npm_config_nodedir=/usr/local
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PGKAFKA_HOST=0.0.0.0 \
    PGKAFKA_METRICS_HOST=0.0.0.0 \
    PGKAFKA_DATA_DIR=/data \
    PGKAFKA_LOG_FORMAT=json
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
# Not root: the image's "node" user runs the broker and, without DATABASE_URL, its embedded PostgreSQL, whose data is the volume.
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
# Kafka, and the HTTP port of /metrics, /health and /ready.
EXPOSE 9092 9308
# Ready: the Kafka listener accepts and PostgreSQL answers. The first start of an embedded database takes a few seconds more.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PGKAFKA_METRICS_PORT || 9308) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 and gets `docker stop`'s SIGTERM: the broker drains, then stops.
CMD ["node", "bin/pgkafka.js", "start"]
