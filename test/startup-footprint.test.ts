// What a gateway process loads at start: libraries that only some requests or
// settings use load when first needed, so an idle gateway's memory stays low
// (src/upstream/undici.ts, batches/s3-storage.ts via a dynamic import; the
// Bedrock signer, the upload parser and the regex parser on first use), and
// the log writer thread loads what writes logs, not the whole store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildConnector, Pool } from 'undici';
import { buildUndiciConnector, UndiciPool } from '../src/upstream/undici.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Registered in every thread of the child (workers inherit --import): each
 * module loaded through the ES module loader (ES modules, and the CommonJS
 * files they import) appended to LOADED_FILE, as a path.
 */
const RECORD_LOADS = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
  import { appendFileSync } from 'node:fs';
  export async function load(url, context, next) {
    if (url.startsWith('file:')) appendFileSync(process.env.LOADED_FILE, decodeURIComponent(new URL(url).pathname) + '\\\\n');
    return next(url, context);
  }\`));`;

/** The files loaded by `script` (an ES module) in a fresh process, in any of its threads, plus its main thread's require.cache. */
function loadedBy(script: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-footprint-'));
  try {
    const file = join(dir, 'loaded.txt');
    // A file, not --input-type=module -e: a worker inherits the flags, and --input-type refuses a file entry point.
    const entry = join(dir, 'entry.mjs');
    writeFileSync(
      entry,
      `${script}
      import { createRequire as footprintRequire } from 'node:module';
      import { appendFileSync as footprintAppend } from 'node:fs';
      footprintAppend(${JSON.stringify(file)}, Object.keys(footprintRequire(import.meta.url).cache).map((f) => f + '\\n').join(''));`,
    );
    const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(RECORD_LOADS)}`, entry], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, LOADED_FILE: file, GATEWAY_TEST_DATA_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((f) => f !== '')
      .map((f) => f.replaceAll('\\', '/'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const moduleUrl = (path: string): string => JSON.stringify(pathToFileURL(resolve(DIST, path)).href);

/** The gateway's modules imported, as main.ts imports them. */
const loadedAtStart = (): string[] => loadedBy(`await import(${moduleUrl('src/gateway.js')});`);

/** One request's log entry, spelled out: the test's support modules would load more of the gateway than the writer does. */
const ENTRY = JSON.stringify({
  createdAtMs: 1_760_000_000_000, latencyMs: 1, traceId: 't', spanId: null, parentSpanId: null, spanName: null, workspaceId: 'default',
  apiKeyId: 'k', userId: null, configId: null, virtualKeyId: null, integrationId: null, promptId: null, promptVersion: null,
  pricingMultiplier: 1, customPricing: null, provider: null, model: null, endpoint: 'chat', method: 'POST', path: '/chat/completions',
  status: 200, upstreamTtfbMs: null, cacheStatus: null, retryCount: 0, lastUsedOptionIndex: null, metadata: null, gatewayError: null,
  hooks: null, cut: false, headers: null, contentType: null, bodies: false, requestBody: null, requestBytes: 0, answerText: null,
  answerHead: null, answerTail: null,
});

/**
 * A log writer's thread started by an entry (on SQLite in a scratch dir without tables: the write fails and spills, which
 * is no matter here) and closed: once close() resolves, the thread has loaded what it loads to write.
 */
const loadedByLogWriter = (): string[] =>
  loadedBy(`
    const { LogWriter } = await import(${moduleUrl('src/logs/writer.js')});
    const writer = new LogWriter({ dataDir: process.env.GATEWAY_TEST_DATA_DIR, onError: () => {}, onUsage: () => {} });
    writer.write(${ENTRY});
    await writer.close();`);

const under = (files: string[], part: string): string[] => files.filter((f) => f.includes(part));

describe('startup footprint', () => {
  it("loads neither undici's index nor the AWS SDK", () => {
    const files = loadedAtStart();
    assert.ok(files.some((f) => f.includes('/undici/lib/dispatcher/pool.js')), 'the upstream pool is loaded');
    assert.ok(files.some((f) => f.endsWith('/dist/src/shared/linear-regex.js')), 'the modules that use the lazy libraries are loaded');
    assert.deepEqual(files.filter((f) => f.endsWith('/node_modules/undici/index.js')), []);
    assert.deepEqual(under(files, '/node_modules/@aws-sdk/'), []);
    // The Postgres driver (store/postgres.ts): only when DATABASE_URL names a database.
    assert.deepEqual(under(files, '/node_modules/pg/'), []);
    // Bedrock's signer (providers/bedrock/sigv4.ts): on the first Bedrock call.
    assert.deepEqual(under(files, '/node_modules/@smithy/'), []);
    // The multipart parser (batches/upload.ts): on the first file upload.
    assert.deepEqual(under(files, '/node_modules/busboy/'), []);
    // The regex parser (shared/linear-regex.ts): on the first caller's pattern.
    assert.deepEqual(under(files, '/node_modules/@eslint-community/regexpp/'), []);
  });

  it("takes undici's own Pool and connector, as its index exports them", () => {
    assert.equal(UndiciPool, Pool);
    assert.equal(buildUndiciConnector, buildConnector);
  });

  it('starts the log writer thread without the rest of the store', () => {
    const files = loadedByLogWriter();
    assert.ok(files.some((f) => f.endsWith('/dist/src/logs/writer-thread.js')), 'the writer thread ran');
    assert.ok(files.some((f) => f.endsWith('/dist/src/store/sqlite.js')), 'it opened its database');
    // store.ts holds every repository and migrations.ts the whole schema: the writer needs neither (store/open-db.ts).
    assert.deepEqual(
      files.filter((f) => f.endsWith('/dist/src/store/store.js') || f.endsWith('/dist/src/store/migrations.js')),
      [],
    );
  });
});
