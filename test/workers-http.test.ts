// A cluster (GATEWAY_WORKERS=2) as a real process tree, SQLite (revocation on Postgres too), no Redis: a rate
// limit is exact across the workers, and so are a budget, the answer cache and circuit breakers; a key revoked through one worker is refused
// at once by every worker (store changes relayed by the primary); a worker killed
// with SIGKILL is replaced while requests go on; SIGTERM to the primary lets a
// request in flight finish, then the primary exits 0; /metrics answers the sum of
// both workers' series. Every request opens a new
// connection, which the primary hands to the workers in turn, so both serve.
import { beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSchema, dropSchemas, schemaUrl } from './support/engines.js';
import { answerUsing, chatCompletion, useMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useSpawnedGateway, type GatewayProcess } from './support/process.js';

const ADMIN = 'workers-admin-key-0123456789abcdef';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

interface Answer {
  status: number;
  body: string;
}

/** One request on a connection of its own (no keep-alive): the primary hands each connection to the next worker. */
function request(gw: GatewayProcess, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: gw.port, path, method: init.method ?? (body === undefined ? 'GET' : 'POST'), agent: false, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (s: string) => (text += s));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${path} within 30 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function admin(gw: GatewayProcess, path: string, body?: unknown, method?: string): Promise<Record<string, any>> {
  const res = await request(gw, `/v1${path}`, { method, body, headers: { 'x-gateway-api-key': ADMIN } });
  assert.ok(res.status >= 200 && res.status < 300, `${method ?? 'POST'} ${path}: ${res.status} ${res.body}`);
  return res.body === '' ? {} : (JSON.parse(res.body) as Record<string, any>);
}

/** The primary's children: its workers. */
function workerPids(gw: GatewayProcess): number[] {
  try {
    return execFileSync('ps', ['--ppid', String(gw.child.pid), '-o', 'pid=', '-o', 'stat='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter(([pid, stat]) => pid !== undefined && pid !== '' && !stat?.startsWith('Z'))
      .map(([pid]) => Number(pid));
  } catch {
    return []; // ps exits 1 when there is none
  }
}

async function until<T>(what: string, f: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== null && v !== undefined && v !== false) return v as NonNullable<T>;
    assert.ok(Date.now() < deadline, `not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

describe('a cluster of two workers (SQLite unless said, no Redis)', { timeout: 180_000 }, () => {
  const useMock = useMockOpenAI({ name: 'mock' });
  const spawn = useSpawnedGateway('switchyard-workers-', { GATEWAY_ADMIN_API_KEY: ADMIN, GATEWAY_WORKERS: '2', LOG_LEVEL: 'info' }, workerPids);
  let mock: MockOpenAI;
  beforeEach(() => (mock = useMock()));

  async function start(env: Record<string, string> = {}): Promise<GatewayProcess> {
    const proc = await spawn(env);
    await until('both workers listening', () => proc.stdout().includes('every worker listening'));
    assert.equal(workerPids(proc).length, 2);
    return proc;
  }

  /** A new workspace and a key of it with completions.write, made through the admin API. */
  async function tenant(proc: GatewayProcess): Promise<{ workspaceId: string; keyId: string; secret: string }> {
    const ws = await admin(proc, '/workspaces', { name: `ws ${Math.random().toString(36).slice(2, 8)}` });
    const key = await admin(proc, '/api-keys/workspace/service', { name: 'worker test', scopes: ['completions.write'], workspace_id: ws.id });
    return { workspaceId: ws.id as string, keyId: key.id as string, secret: key.key as string };
  }

  const chat = (proc: GatewayProcess, secret: string): Promise<Answer> =>
    request(proc, '/v1/chat/completions', {
      headers: { 'x-gateway-api-key': secret, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: 'Bearer sk-mock' },
      body: CHAT,
    });

  /** A key both workers have authenticated (and cached), deleted through the admin API: refused on every connection after. */
  async function refusedEverywhereOnceDeleted(proc: GatewayProcess): Promise<void> {
    const t = await tenant(proc);
    for (let i = 0; i < 6; i++) assert.equal((await chat(proc, t.secret)).status, 200);
    await admin(proc, `/api-keys/${t.keyId}`, undefined, 'DELETE');
    const after = [];
    for (let i = 0; i < 6; i++) after.push((await chat(proc, t.secret)).status);
    assert.deepEqual(after, [401, 401, 401, 401, 401, 401]);
  }

  it('a rate limit of N requests a minute admits exactly N across both workers', async () => {
    const proc = await start();
    const t = await tenant(proc);
    const N = 7;
    const k = 5;
    await admin(proc, '/policies/rate-limits', {
      name: 'cluster',
      conditions: [{ key: 'workspace_id', value: t.workspaceId }],
      group_by: [{ key: 'workspace_id' }],
      type: 'requests',
      unit: 'rpm',
      value: N,
      workspace_id: t.workspaceId,
    });
    // Concurrent, each on its own connection: the primary spreads them over both workers.
    const answers = await Promise.all(Array.from({ length: N + k }, () => chat(proc, t.secret)));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, N, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 429).length, k, statuses.join(' '));
    // The minute is spent on both workers.
    for (let i = 0; i < 4; i++) assert.equal((await chat(proc, t.secret)).status, 429);
  });

  it('a token budget admits exactly what fits across both workers, then refuses on each', async () => {
    const proc = await start();
    const t = await tenant(proc);
    // 8 prompt tokens estimated + max_tokens 12: each request reserves 20 of the 60, and its answer uses 20.
    await admin(proc, '/policies/usage-limits', {
      name: 'cluster budget',
      conditions: [{ key: 'workspace_id', value: t.workspaceId }],
      group_by: [{ key: 'workspace_id' }],
      type: 'tokens',
      credit_limit: 60,
      workspace_id: t.workspaceId,
    });
    const used = answerUsing(20, 200);
    mock.enqueue('/v1/chat/completions', ...Array.from({ length: 10 }, () => used));
    const budgeted = (): Promise<Answer> =>
      request(proc, '/v1/chat/completions', {
        headers: { 'x-gateway-api-key': t.secret, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: 'Bearer sk-mock' },
        body: { ...CHAT, max_tokens: 12 },
      });
    const statuses = (await Promise.all(Array.from({ length: 10 }, budgeted))).map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, 3, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 412).length, 7, statuses.join(' '));
    // Spent on both workers: the usage settled is the budget's.
    for (let i = 0; i < 4; i++) assert.equal((await budgeted()).status, 412);
    assert.equal(mock.requests.length, 3);
  });

  it('the answer cache and circuit breakers are shared: one call for the same request, a circuit both workers opened', async () => {
    const proc = await start();
    const t = await tenant(proc);
    const routed = (config: unknown): Promise<Answer> =>
      request(proc, '/v1/chat/completions', { headers: { 'x-gateway-api-key': t.secret, 'x-gateway-config': JSON.stringify(config) }, body: CHAT });
    const target = { provider: 'openai', custom_host: mock.url, api_key: 'sk-mock' };

    // Each on a new connection, so the workers take them in turn: a cache per worker would call the provider twice.
    const cached = { ...target, cache: { mode: 'simple', max_age: 600 } };
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await routed(cached)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
    assert.equal(mock.requests.length, 1, 'the first worker’s answer served the other');

    // A failure on each worker: a count per worker would leave both circuits closed at 1 of 2.
    mock.reset();
    const failure = { status: 502, body: { error: { message: 'upstream down', type: 'server_error', param: null, code: null } } };
    mock.enqueue('/v1/chat/completions', ...Array.from({ length: 6 }, () => failure));
    const guarded = { strategy: { mode: 'fallback' }, cb_config: { failure_threshold: 2, cooldown_interval: 600_000 }, targets: [target] };
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push((await routed(guarded)).status);
    assert.deepEqual(seen, [502, 502, 503, 503, 503, 503]);
    assert.equal(mock.requests.length, 2, 'an open circuit sends nothing, whichever worker asks');
  });

  it('a key deleted through one worker is refused by every worker at once', async () => {
    await refusedEverywhereOnceDeleted(await start());
  });

  it('/metrics sums the series of both workers, whichever takes the scrape', async () => {
    const proc = await start();
    /** switchyard_requests_total over every label set, as one scrape answers it. */
    const served = async (): Promise<number> => {
      const res = await request(proc, '/metrics');
      assert.equal(res.status, 200);
      return res.body
        .split('\n')
        .filter((l) => l.startsWith('switchyard_requests_total{'))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    };
    const before = await served();
    for (let i = 0; i < 10; i++) assert.equal((await chat(proc, ADMIN)).status, 200);
    // Each scrape on a new connection: the workers take them in turn, and each answers for both.
    const scrapes = [];
    for (let i = 0; i < 4; i++) scrapes.push(await served());
    assert.deepEqual(scrapes, [before + 10, before + 10, before + 10, before + 10]);
    const text = (await request(proc, '/metrics')).body;
    const count = text.split('\n').filter((l) => l.startsWith('switchyard_request_duration_seconds_count{'));
    assert.equal(
      count.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0),
      before + 10,
      'histograms are summed too',
    );
    // Concurrent scrapes share one gathering and agree.
    const together = await Promise.all(Array.from({ length: 6 }, served));
    assert.deepEqual(together, Array(6).fill(before + 10));
    // The primary's log writer wrote them, and says so in the same sum (else flushed stays 0 and store_down unseen).
    const flushed = async (): Promise<number> => Number(/^switchyard_log_records_total\{outcome="flushed"\} (\d+)/m.exec((await request(proc, '/metrics')).body)?.[1]);
    await until('the writer\'s flushed records in /metrics', async () => (await flushed()) >= 10);
  });

  it('on Postgres too (NOTIFY and the relay both deliver): a deleted key is refused by every worker at once', async () => {
    const schema = await createSchema();
    try {
      const proc = await start({ DATABASE_URL: schemaUrl(schema) });
      await refusedEverywhereOnceDeleted(proc);
      // Another key still works on both after the double notices.
      for (let i = 0; i < 4; i++) assert.equal((await chat(proc, ADMIN)).status, 200);
    } finally {
      await dropSchemas([schema]);
    }
  });

  it('a worker killed with SIGKILL is replaced; requests go on being answered', async () => {
    const proc = await start();
    const before = workerPids(proc);
    const [victim] = before as [number];
    process.kill(victim, 'SIGKILL');
    // The primary's own word that it saw the death (ps may stop listing the pid a moment before it hands connections elsewhere).
    await until('the primary saw the worker die', () => proc.stdout().includes('a worker died'));
    assert.ok(!workerPids(proc).includes(victim));
    for (let i = 0; i < 6; i++) assert.equal((await chat(proc, ADMIN)).status, 200);
    const replaced = await until('a new worker', () => {
      const now = workerPids(proc);
      return now.length === 2 && now.some((p) => !before.includes(p)) ? now : null;
    });
    assert.ok(!replaced.includes(victim));
    for (let i = 0; i < 6; i++) assert.equal((await chat(proc, ADMIN)).status, 200);
    assert.equal(proc.child.exitCode, null, 'the primary lives on');
  });

  it('SIGTERM to the primary: a request in flight completes with 200, then the primary exits 0', async () => {
    const proc = await start();
    mock.enqueue('/v1/chat/completions', { ...chatCompletion(CHAT, 'mock'), delayMs: 1500 });
    const inFlight = chat(proc, ADMIN);
    await until('the request upstream', () => mock.requests.length === 1);
    proc.child.kill('SIGTERM');
    const answer = await inFlight;
    assert.equal(answer.status, 200, answer.body);
    assert.equal(JSON.parse(answer.body).object, 'chat.completion');
    const { code, signal } = await proc.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, proc.stdout().split('\n').filter((l) => !l.includes('"level":30')).join('\n') + proc.stderr());
    assert.deepEqual(workerPids(proc), []);
  });
});

describe('GATEWAY_WORKERS unset', { timeout: 120_000 }, () => {
  const spawn = useSpawnedGateway('switchyard-auto-', { GATEWAY_ADMIN_API_KEY: ADMIN, LOG_LEVEL: 'info' }, workerPids);

  it('is auto: one worker per core the process may use (one process on one core)', async () => {
    const proc = await spawn();
    const cores = availableParallelism();
    if (cores > 1) await until('every worker listening', () => proc.stdout().includes('every worker listening'));
    assert.equal(workerPids(proc).length, cores > 1 ? cores : 0);
    assert.equal((await request(proc, '/health')).status, 200);
  });
});
