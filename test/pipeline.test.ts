// The request pipeline's runner (src/pipeline/): stages in order over one context, the
// first that answers ends the request, synchronous while the stages are, and the record
// stage runs once however the request ended — a stage's bug included.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestContext, runStages, type Outcome, type Stage } from '../src/pipeline/context.js';
import { Pipeline } from '../src/pipeline/pipeline.js';
import { GatewayError } from '../src/shared/errors.js';
import type { ApiKeyRecord } from '../src/store/api-keys.js';
import { NO_EXPORT, readRequestIds } from '../src/tracing/tracer.js';
import { assertEnvelope } from './support/http.js';

const KEY = { id: 'key-1', workspaceId: 'ws-1' } as ApiKeyRecord;

/** A stage that notes its name in `seen` and answers `out` (a promise of it when `async`). */
function stage(name: string, seen: string[], out: Outcome = 'next', async = false): Stage {
  return {
    name,
    run() {
      seen.push(name);
      return async ? new Promise<Outcome>((resolve) => setImmediate(() => resolve(out))) : out;
    },
  };
}

const noContext = {} as RequestContext;

describe('runStages', () => {
  it('runs every stage in order and stays synchronous while they are', () => {
    const seen: string[] = [];
    const out = runStages([stage('a', seen), stage('b', seen), stage('c', seen)], noContext);
    assert.equal(out, 'next');
    assert.deepEqual(seen, ['a', 'b', 'c']);
  });

  it('stops at the first stage that answers', () => {
    const seen: string[] = [];
    assert.equal(runStages([stage('a', seen), stage('b', seen, 'done'), stage('c', seen)], noContext), 'done');
    assert.deepEqual(seen, ['a', 'b']);
  });

  it('waits for an asynchronous stage, then goes on or stops as it says', async () => {
    const seen: string[] = [];
    const out = runStages([stage('a', seen, 'next', true), stage('b', seen), stage('c', seen, 'done', true), stage('d', seen)], noContext);
    assert.ok(out instanceof Promise);
    assert.deepEqual(seen, ['a']);
    assert.equal(await out, 'done');
    assert.deepEqual(seen, ['a', 'b', 'c']);
  });
});

describe('Pipeline', () => {
  let server: Server;
  let url: string;
  let stages: readonly Stage[] = [];
  const recorded: RequestContext[] = [];
  const errors: unknown[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const pipeline = new Pipeline(stages, { record: (ctx) => recorded.push(ctx) }, NO_EXPORT, (err) => errors.push(err));
      void pipeline.handle(req, res, { endpoint: 'chat', path: '/chat/completions', pathname: '/v1/chat/completions', ids: readRequestIds(req.headers), startedAt: performance.now(), key: KEY });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  it('a refusal ends the request with the envelope and the trace id; later stages do not run; it is recorded once', async () => {
    const seen: string[] = [];
    const refuse: Stage = { name: 'refuse', run: (ctx) => ctx.refuse(new GatewayError(429, 'slow down')) };
    stages = [stage('a', seen), refuse, stage('c', seen)];
    recorded.length = 0;
    const res = await fetch(url, { method: 'POST', headers: { 'x-gateway-trace-id': 'trace-1' } });
    assert.equal(res.headers.get('x-gateway-trace-id'), 'trace-1');
    assert.equal(res.headers.get('x-gateway-cache-status'), 'DISABLED');
    assert.equal((await assertEnvelope(res, 429)).message, 'slow down');
    assert.deepEqual(seen, ['a']);
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.status, 429);
    assert.equal(recorded[0]!.error?.message, 'slow down');
  });

  it('a stage that throws is answered 500 in the envelope, told to onError, and still recorded', async () => {
    const boom = new Error('bug');
    stages = [{ name: 'broken', run: async () => Promise.reject(boom) }];
    recorded.length = 0;
    errors.length = 0;
    const res = await fetch(url, { method: 'POST' });
    assert.equal((await assertEnvelope(res, 500)).code, 'internal_error');
    assert.deepEqual(errors, [boom]);
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.status, 500);
  });
});
