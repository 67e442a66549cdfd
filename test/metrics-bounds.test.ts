// prom-client keeps every label set it sees until the process ends, so no
// label takes a caller's string as it came: a model is the catalog's id for
// its provider or `other`, and circuits (one per inline config's target)
// keep a series for the MAX_CIRCUIT_SERIES last seen, the evictions counted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CIRCUIT_SERIES, Metrics, type FinishedRequest } from '../src/metrics/metrics.js';

const request = (provider: string, model: string): FinishedRequest => ({
  endpoint: 'chat',
  provider,
  model,
  status: 200,
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
