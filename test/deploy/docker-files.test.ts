// The Dockerfile and docker-compose.yml cannot be built here (no Docker
// engine): their key properties are checked by reading them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { options } from '../../src/config/schema.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const dockerfile = read('Dockerfile');
const compose = read('docker-compose.yml');
/** The final stage: what runs. */
const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
/** Instructions with their continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((l) => /^[A-Z]+ /.test(l));

describe('Dockerfile', () => {
  it('runs the broker as a user other than root, with its data on a volume', () => {
    expect(runtime).toMatch(/^USER (?!root\b|0\b)\S+$/m);
    expect(runtime).toContain(`PGKAFKA_DATA_DIR=/data`);
    expect(runtime).toMatch(/^VOLUME \/data$/m);
  });

  it('publishes the Kafka and HTTP ports and checks health with /ready on the configured HTTP port', () => {
    expect(runtime).toMatch(new RegExp(`^EXPOSE ${options.port.default} ${options.metricsPort.default}$`, 'm'));
    const healthcheck = instructions.find((l) => l.startsWith('HEALTHCHECK '));
    expect(healthcheck).toMatch(/\/ready/);
    expect(healthcheck).toContain(`process.env.PGKAFKA_METRICS_PORT || ${options.metricsPort.default}`);
    expect(runtime).toContain('PGKAFKA_METRICS_HOST=0.0.0.0');
  });

  it('downloads nothing at build time but packages from the registries', () => {
    const runs = instructions.filter((l) => l.startsWith('RUN ') || l.startsWith('ADD '));
    for (const run of runs) expect(run).not.toMatch(/\b(curl|wget|git clone)\b|https?:\/\//);
    // zstd-napi's install script would fetch a prebuilt binary from outside npm: it is compiled instead.
    expect(dockerfile).toContain('npm_config_build_from_source=true');
    expect(instructions.find((l) => l.includes('npm ci'))).toContain('--omit=dev');
  });

  it('starts node itself as PID 1, so docker stop reaches the broker', () => {
    expect(runtime).toMatch(/^CMD \["node", "bin\/pgkafka\.js", "start"\]$/m);
  });
});

describe('docker-compose.yml', () => {
  const service = compose.slice(compose.indexOf('\n  pgkafka:'));
  it('publishes the Kafka and HTTP ports', () => {
    expect(service).toContain(`'${options.port.default}:${options.port.default}'`);
    expect(service).toContain(`'${options.metricsPort.default}:${options.metricsPort.default}'`);
  });

  it('advertises the service name, which other containers resolve, overridable for host-only use', () => {
    expect(service).toContain('PGKAFKA_ADVERTISED_HOST: ${PGKAFKA_ADVERTISED_HOST:-pgkafka}');
  });

  it('keeps the data directory on a named volume', () => {
    expect(service).toMatch(/- pgkafka-data:\/data/);
    expect(compose).toMatch(/^volumes:\n(\s+\S+:\n)*\s+pgkafka-data:/m);
  });
});
