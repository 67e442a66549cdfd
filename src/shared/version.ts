/** The gateway's version, from its package.json at the project root (dist/src/shared/ is three folders below it). */
import { readFileSync } from 'node:fs';

export const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
