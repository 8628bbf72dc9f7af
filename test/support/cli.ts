// Runs a CLI command function in-process and collects what it writes.
import { Writable } from 'node:stream';

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

export type CliCommand = (args: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => Promise<number>;

export async function runCli(command: CliCommand, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  const out = new Collect();
  const err = new Collect();
  const code = await command(args, env, out, err);
  return { code, out: out.text, err: err.text };
}
