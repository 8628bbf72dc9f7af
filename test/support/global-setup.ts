import type { TestProject } from 'vitest/node';
import { provisionTestDatabase } from './database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const db = await provisionTestDatabase();
  process.stdout.write(`tests use PostgreSQL from: ${db.source}\n`);
  project.provide('databaseUrl', db.url);
  return () => db.stop();
}
