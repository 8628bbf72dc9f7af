// kafka-acls.sh (Kafka 4.3.1's org.apache.kafka.tools.AclCommand) against a
// pgkafka broker with the authorizer on, logged in as a super user over
// SASL_PLAINTEXT (--command-config): ACLs added (literal, prefixed, and the
// --producer / --consumer conveniences), listed, removed, and what they then
// let a principal do.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../test/support/broker.js';
import { addUser } from '../test/support/sasl.js';
import { propertiesFile, runTool, runToolOk } from './support/kafka-tools.js';

let broker: TestBroker;
let admin: string[];
let appConfig: string;

const saslConfig = (user: string) =>
  propertiesFile({
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': 'SCRAM-SHA-256',
    'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${user}-secret";`,
  });

beforeAll(async () => {
  broker = await startTestBroker({ listeners: 'SASL_PLAINTEXT://127.0.0.1:0', authorizerEnabled: true, superUsers: 'User:admin', autoCreateTopicsEnable: false });
  await addUser(broker, 'admin', 'admin-secret');
  await addUser(broker, 'app', 'app-secret');
  admin = ['--bootstrap-server', broker.bootstrap, '--command-config', saslConfig('admin')];
  appConfig = saslConfig('app');
  await runToolOk('kafka-topics', [...admin, '--create', '--topic', 'acl-orders', '--partitions', '1']);
});
afterAll(() => broker?.destroy());

const acls = (...args: string[]) => runToolOk('kafka-acls', [...admin, ...args]);

/** `--list` (and `--add`) print, per resource, "Current (Adding) ACLs for resource `ResourcePattern(…)`:" and one `(principal=…, …)` line per ACL. */
function listed(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let resource = '';
  for (const line of stdout.split('\n')) {
    const head = /^(?:Current|Adding) ACLs for resource `(.*)`:/.exec(line);
    if (head) out[(resource = head[1]!)] = [];
    else if (line.trim().startsWith('(principal=')) out[resource]!.push(line.trim());
  }
  for (const k of Object.keys(out)) out[k]!.sort();
  return out;
}

/** What `app` can do on acl-orders: produce (kafkajs), and read in group acl-readers (kafka-console-consumer). */
async function appCan(): Promise<{ produce: boolean; read: boolean }> {
  const kafka = new Kafka({ brokers: [broker.bootstrap], sasl: { mechanism: 'scram-sha-256', username: 'app', password: 'app-secret' }, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  const produce = await producer.send({ topic: 'acl-orders', messages: [{ value: 'x' }] }).then(
    () => true,
    () => false,
  );
  await producer.disconnect();
  const read = await runTool('kafka-console-consumer', [
    '--bootstrap-server',
    broker.bootstrap,
    '--command-config',
    appConfig,
    '--topic',
    'acl-orders',
    '--group',
    'acl-readers',
    '--from-beginning',
    '--max-messages',
    '1',
    '--timeout-ms',
    '10000',
  ]);
  return { produce, read: read.code === 0 && read.stdout === 'x\n' };
}

const topic = (name: string, type = 'LITERAL') => `ResourcePattern(resourceType=TOPIC, name=${name}, patternType=${type})`;
const acl = (operation: string, permission = 'ALLOW', principal = 'User:app', host = '*') => `(principal=${principal}, host=${host}, operation=${operation}, permissionType=${permission})`;

describe('kafka-acls', () => {
  it('adds, lists and removes ACLs, and they decide what a principal may do', async () => {
    expect(await appCan()).toEqual({ produce: false, read: false });

    const added = await acls('--add', '--allow-principal', 'User:app', '--producer', '--topic', 'acl-orders');
    expect(added.stdout).toContain(`Adding ACLs for resource \`${topic('acl-orders')}\`:`);
    expect(listed(added.stdout)[topic('acl-orders')]).toEqual([acl('CREATE'), acl('DESCRIBE'), acl('WRITE')]);
    await acls('--add', '--allow-principal', 'User:app', '--consumer', '--topic', 'acl-', '--resource-pattern-type', 'prefixed', '--group', 'acl-readers');
    await acls('--add', '--deny-principal', 'User:app', '--deny-host', '10.0.0.1', '--operation', 'Read', '--topic', 'acl-orders');

    expect(listed((await acls('--list')).stdout)).toEqual({
      [topic('acl-orders')]: [acl('CREATE'), acl('DESCRIBE'), acl('READ', 'DENY', 'User:app', '10.0.0.1'), acl('WRITE')].sort(),
      [topic('acl-', 'PREFIXED')]: [acl('DESCRIBE'), acl('READ')],
      // --resource-pattern-type applies to every resource named, the group too.
      ['ResourcePattern(resourceType=GROUP, name=acl-readers, patternType=PREFIXED)']: [acl('READ')],
    });
    // Filtered by resource, and by principal.
    expect(Object.keys(listed((await acls('--list', '--topic', 'acl-orders')).stdout))).toEqual([topic('acl-orders')]);
    expect(Object.keys(listed((await acls('--list', '--principal', 'User:nobody')).stdout))).toEqual([]);
    expect(await appCan()).toEqual({ produce: true, read: true });

    await acls('--remove', '--force', '--allow-principal', 'User:app', '--operation', 'Write', '--topic', 'acl-orders');
    await acls('--remove', '--force', '--topic', 'acl-', '--group', 'acl-readers', '--resource-pattern-type', 'prefixed');
    expect(listed((await acls('--list')).stdout)).toEqual({
      [topic('acl-orders')]: [acl('CREATE'), acl('DESCRIBE'), acl('READ', 'DENY', 'User:app', '10.0.0.1')].sort(),
    });
    expect(await appCan()).toEqual({ produce: false, read: false });
  }, 90_000);
});
