import { defineConfig } from 'vitest/config';
import { COMPAT, globs, INTEGRATION } from './test/projects.js';

// Three projects (test/projects.ts says which file goes where): `npm test` runs
// them all in one run; `npm run test:unit|test:integration|test:compat` one each.
// Only integration and compat provision PostgreSQL (global-setup).
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more workers only add contention with PostgreSQL and the clients.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: globs(INTEGRATION) } },
      { extends: true, test: { name: 'integration', include: globs(INTEGRATION), globalSetup: ['test/support/global-setup.ts'] } },
      { extends: true, test: { name: 'compat', include: globs(COMPAT), globalSetup: ['test/support/global-setup.ts'] } },
    ],
  },
});
