// What a gateway process loads at start: libraries that only some requests or
// settings use load when first needed, so an idle gateway's memory stays low
// (src/upstream/undici.ts, batches/s3-storage.ts via a dynamic import).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, buildConnector } from 'undici';
import { buildUndiciConnector, UndiciAgent } from '../src/upstream/undici.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The CommonJS files loaded once the gateway's modules are imported, in a fresh process. */
function loadedAtStart(): string[] {
  const script = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(resolve(DIST, 'src/gateway.js'))});
    process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as string[];
}

describe('startup footprint', () => {
  it("loads neither undici's index nor the AWS SDK", () => {
    const files = loadedAtStart().map((f) => f.replaceAll('\\', '/'));
    assert.ok(files.some((f) => f.includes('/undici/lib/dispatcher/agent.js')), 'the upstream agent is loaded');
    assert.deepEqual(files.filter((f) => f.endsWith('/node_modules/undici/index.js')), []);
    assert.deepEqual(files.filter((f) => f.includes('/node_modules/@aws-sdk/')), []);
  });

  it("takes undici's own Agent and connector, as its index exports them", () => {
    assert.equal(UndiciAgent, Agent);
    assert.equal(buildUndiciConnector, buildConnector);
  });
});
