// Types for scripts/eslint-layers.js (plain JavaScript, since eslint.config.js loads it).
import type { ESLint } from 'eslint';

export interface Layer {
  name: string;
  files: string[];
  imports: '*' | string[];
  types?: string[];
}
export const LAYERS: Layer[];
export const POSTGRES_PACKAGES: string[];
export function layerOf(rel: string): Layer | null;
declare const plugin: ESLint.Plugin;
export default plugin;
