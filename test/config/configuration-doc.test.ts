import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { options } from '../../src/config/schema.js';

describe('docs/configuration.md table', () => {
  const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  it('documents every option with its variable and default', () => {
    for (const [name, o] of Object.entries(options)) {
      const defaultText = o.default === undefined ? '_(unset)_' : `\`${String(o.default)}\``;
      expect(doc, name).toContain(`| \`${o.env}\` | \`${name}\` | ${defaultText} |`);
    }
  });
});
