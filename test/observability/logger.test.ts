// Log lines for people on a terminal, JSON lines for everything else.
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';

function sink(isTTY: boolean): Writable & { text: () => string; isTTY: boolean } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return Object.assign(stream, { text: () => text, isTTY });
}

describe('createLogger', () => {
  it('writes JSON lines when the destination is not a terminal', () => {
    const out = sink(false);
    createLogger('info', out, 'auto').info({ port: 9092 }, 'pgkafka broker listening');
    expect(JSON.parse(out.text())).toMatchObject({ level: 30, service: 'pgkafka', port: 9092, msg: 'pgkafka broker listening' });
  });

  it('writes readable lines, at once, when the destination is a terminal', () => {
    const out = sink(true);
    const log = createLogger('info', out, 'auto');
    log.warn({ code: 'PGKAFKA_X' }, 'something to know');
    log.debug('not at info');
    // Written synchronously: a fatal line is out before process.exit.
    const text = stripVTControlCharacters(out.text());
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: something to know {"code":"PGKAFKA_X"}\n$/);
  });

  it('follows an explicit format whatever the destination', () => {
    const pretty = sink(false);
    createLogger('info', pretty, 'pretty').info('hello');
    expect(pretty.text()).toMatch(/INFO: hello\n$/);
    const json = sink(true);
    createLogger('info', json, 'json').info('hello');
    expect(JSON.parse(json.text())).toMatchObject({ msg: 'hello' });
  });
});
