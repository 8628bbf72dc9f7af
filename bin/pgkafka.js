#!/usr/bin/env node
// A checkout runs the TypeScript through tsx, so it works without a build
// step; the published package has no src/ and runs the build in dist/.
import { existsSync } from 'node:fs';

if (existsSync(new URL('../src/cli/main.ts', import.meta.url))) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
} else {
  await import('../dist/cli/main.js');
}
