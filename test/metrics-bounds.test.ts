// prom-client keeps every label set it sees until the process ends, so no
// label takes a caller's string as it came: a model is the catalog's id for
// its provider or `other`, a status one of a fixed set or its class, and circuits (one per inline config's target)
// keep a series for the MAX_CIRCUIT_SERIES last seen, the evictions counted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CIRCUIT_SERIES, Metrics, type FinishedRequest } from '../src/metrics/metrics.js';

const request = (provider: string, model: string, status = 200): FinishedRequest => ({
  endpoint: 'chat',
  provider,
  model,
  status,
  totalMs: 10,
  upstreamMs: 8,
  waitedMs: 0,
  retries: 0,
  fallbacks: 0,
  cacheStatus: null,
});

async function series(m: Metrics, name: string): Promise<string[]> {
  return (await m.registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`));
}

describe('metric labels are bounded', () => {
  it('a model the catalog knows is its id; any other is `other`, however many there are', async () => {
    const m = new Metrics();
    m.record(request('openai', 'gpt-4o-mini'));
    m.record(request('bedrock', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0'));
    m.record(request('none', 'none'));
    for (let i = 0; i < 1000; i++) m.record(request('openai', `made-up-${i}`));
    m.usage('openai', 'made-up-1', 3, 4, null);
    m.usage('openai', 'gpt-4o-mini', 3, 4, null);
    const models = new Set((await series(m, 'switchyard_requests_total')).map((l) => /model="([^"]*)"/.exec(l)![1]));
    assert.deepEqual([...models].sort(), ['gpt-4o-mini', 'none', 'other', 'us.anthropic.claude-3-haiku-20240307-v1:0']);
    const tokens = await series(m, 'switchyard_tokens_total');
    assert.deepEqual(tokens.map((l) => /model="([^"]*)",type="input"/.exec(l)?.[1]).filter(Boolean).sort(), ['gpt-4o-mini', 'other']);
  });

  it('a status is one of a fixed set or its class, whatever codes an upstream answers', async () => {
    const m = new Metrics();
    for (let status = 100; status <= 999; status++) m.record(request('openai', 'gpt-4o-mini', status));
    const statuses = new Set((await series(m, 'switchyard_requests_total')).map((l) => /status="([^"]*)"/.exec(l)![1]));
    assert.ok(statuses.size <= 40, [...statuses].join(' '));
    for (const kept of ['200', '246', '429', '446', '499', '503']) assert.ok(statuses.has(kept), kept);
    for (const bucketed of ['2xx', '5xx', '9xx']) assert.ok(statuses.has(bucketed), bucketed);
    assert.ok(!statuses.has('599') && !statuses.has('999'));
    const upstream = new Set((await series(m, 'switchyard_upstream_duration_seconds_count')).map((l) => /status="([^"]*)"/.exec(l)![1]));
    assert.deepEqual([...upstream].sort(), [...statuses].sort());
  });

  it('circuit state series: the last MAX_CIRCUIT_SERIES circuits seen, each one removed counted', async () => {
    const m = new Metrics();
    const extra = 50;
    for (let i = 0; i < MAX_CIRCUIT_SERIES + extra; i++) m.circuit(`inline-${i}:config`, 'open');
    const circuits = await series(m, 'switchyard_circuit_state');
    assert.equal(circuits.length, MAX_CIRCUIT_SERIES);
    assert.ok(circuits.some((l) => l.includes(`"inline-${MAX_CIRCUIT_SERIES + extra - 1}:config"`)));
    assert.ok(!circuits.some((l) => l.includes('"inline-0:config"')));
    const evictions = await series(m, 'switchyard_bounded_evictions_total');
    assert.ok(evictions.includes(`switchyard_bounded_evictions_total{map="circuit_series"} ${extra}`), evictions.join('\n'));
    assert.ok(evictions.includes('switchyard_bounded_evictions_total{map="rate_counters"} 0'), 'every map exposed from the start');
    assert.ok(evictions.includes('switchyard_bounded_evictions_total{map="s3_clients"} 0'), 'the S3 clients of Bedrock batches counted too');
  });
});
