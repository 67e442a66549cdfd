/**
 * The two parts of undici the gateway uses, required by their paths: undici's
 * index also loads fetch, WebSocket, EventSource and its cache and mock
 * layers, some 3 MiB of heap (about 10 MiB of RSS) that no gateway process
 * uses. Types are the package's own (import type from 'undici').
 */
import { createRequire } from 'node:module';
import type * as undici from 'undici';

const require = createRequire(import.meta.url);

export const UndiciPool = require('undici/lib/dispatcher/pool.js') as typeof undici.Pool;
export const buildUndiciConnector = require('undici/lib/core/connect.js') as typeof undici.buildConnector;
