// Every reservation settles, on every path (issue 15 item 5): a stream the client leaves
// after 10 chunks, or one the provider breaks off, charges the prompt plus the tokens of
// what passed — counted from the streamed text, since no usage event came — to budgets and
// to token rate limits alike, and releases the rest of the reservation. Before, the
// estimate (prompt + max_tokens) stood as the budget's charge and token limits got nothing.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { estimate } from '../src/limits/budget-estimate.js';
import { countUsage } from '../src/logs/token-count.js';
import { assertEnvelope } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const TOKENS_PER_MINUTE = 1_000_000;
const MESSAGES = [{ role: 'user', content: 'Tell me a story about a lighthouse keeper and a storm.' }];
const STREAMED = { model: 'gpt-4o-mini', messages: MESSAGES, stream: true, max_tokens: 1000 };

/** 20 chunks of a streamed answer, OpenAI's shape; no usage event (none will come). */
const CHUNKS = Array.from({ length: 20 }, (_, i) =>
  JSON.stringify({ id: 'chatcmpl-cut', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: `word${i} and more ` }, finish_reason: null }] }),
);
const sse = (events: readonly string[]): string => events.map((e) => `data: ${e}\n\n`).join('');

describe('usage settles however a stream ends', { timeout: 60_000 }, () => {
  const gw = useGateway();
  let openai: MockOpenAI;
  let secret: string;
  let workspaceId: string;
  let budgetId: string;

  const headers = () => ({ 'x-gateway-api-key': secret, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: 'Bearer sk-test' });
  const chat = (body: unknown) => gw.call('/chat/completions', { headers: headers(), body });

  /** Tokens charged to the rate limit so far, read from a request the body check refuses (it costs no tokens). */
  async function rateCharged(): Promise<number> {
    const res = await chat({ messages: 'not a list' });
    await assertEnvelope(res, 400);
    return TOKENS_PER_MINUTE - Number(res.headers.get('x-gateway-ratelimit-remaining-tokens'));
  }

  /** Waits until the rate limit has been charged more than `before`. */
  async function chargedBeyond(before: number): Promise<number> {
    for (let i = 0; i < 100; i++) {
      const now = await rateCharged();
      if (now > before) return now;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail('nothing was charged');
  }

  /** Asserts the budget's usage is exactly `used`: with the limit set to used + R, a request reserving R + 1 is refused and one reserving R admitted. */
  async function assertBudgetUsed(used: number): Promise<void> {
    const probe = (maxTokens: number) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens });
    const reserve = estimate(probe(100), null).tokens;
    await expectJson(await gw.call(`/policies/usage-limits/${budgetId}`, { method: 'PUT', body: { credit_limit: used + reserve } }), 200);
    const over = await chat(probe(101));
    const overText = await over.text();
    assert.equal(over.status, 412, `budget used less than ${used}: ${overText}`);
    openai.enqueue('/v1/chat/completions', { body: { id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } });
    const fits = await chat(probe(100));
    const fitsText = await fits.text();
    assert.equal(fits.status, 200, `budget used more than ${used}: ${fitsText}`);
    await expectJson(await gw.call(`/policies/usage-limits/${budgetId}`, { method: 'PUT', body: { credit_limit: 1e9 } }), 200);
  }

  before(async () => {
    openai = await startMockOpenAI();
  });
  afterEach(() => openai.reset());
  after(() => openai.close());

  // Each case on a fresh workspace, so counters start at zero.
  async function tenant(name: string): Promise<void> {
    workspaceId = await createWorkspace(gw, `${name} ${Math.random().toString(36).slice(2, 8)}`);
    secret = await workspaceKey(gw, workspaceId, ['completions.write']);
    const scope = { conditions: [{ key: 'workspace_id', value: workspaceId }], group_by: [{ key: 'workspace_id' }], workspace_id: workspaceId };
    await expectJson(await gw.call('/policies/rate-limits', { body: { ...scope, name: 'tokens', type: 'tokens', unit: 'rpm', value: TOKENS_PER_MINUTE } }), 201);
    budgetId = (await expectJson<{ id: string }>(await gw.call('/policies/usage-limits', { body: { ...scope, type: 'tokens', credit_limit: 1e9 } }), 201)).id;
  }

  /** What counting charges for the request and the text that passed: the prompt plus those tokens. */
  async function expected(passed: string): Promise<number> {
    const u = (await countUsage('chat', STREAMED, passed))!;
    const promptOnly = (await countUsage('chat', STREAMED, ''))!.totalTokens;
    assert.ok(u.totalTokens > promptOnly, 'the streamed text counts');
    assert.ok(u.totalTokens < estimate(STREAMED, null).tokens, 'less than the reservation');
    return u.totalTokens;
  }

  it('a client that leaves after 10 chunks is charged the prompt plus those 10 chunks', async () => {
    await tenant('client-cut');
    openai.enqueue('/v1/chat/completions', { sse: CHUNKS, chunkDelayMs: 150 });
    const ac = new AbortController();
    const res = await fetch(`${gw.v1}/chat/completions`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: JSON.stringify(STREAMED), signal: ac.signal });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/^data: \{/gm)?.length ?? 0) < 10) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const want = await expected(sse(CHUNKS.slice(0, 10)));
    assert.equal(await chargedBeyond(0), want, 'token rate limit');
    await assertBudgetUsed(want);
  });

  it('a stream the provider breaks off after 10 chunks (no [DONE], no usage) is charged the same way', async () => {
    await tenant('provider-cut');
    openai.enqueue('/v1/chat/completions', { sse: CHUNKS.slice(0, 10), noDone: true });
    const res = await chat(STREAMED);
    assert.equal(res.status, 200);
    await res.text();
    const want = await expected(sse(CHUNKS.slice(0, 10)));
    assert.equal(await chargedBeyond(0), want, 'token rate limit');
    await assertBudgetUsed(want);
  });

  it('a stream that ends with its usage is charged that usage, not a count', async () => {
    await tenant('whole');
    const usage = JSON.stringify({ id: 'chatcmpl-cut', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 } });
    openai.enqueue('/v1/chat/completions', { sse: [...CHUNKS.slice(0, 3), usage] });
    const res = await chat(STREAMED);
    await res.text();
    assert.equal(await chargedBeyond(0), 12);
    await assertBudgetUsed(12);
  });
});
