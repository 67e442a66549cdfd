// An answer's token usage for its log (src/logs/usage.ts, token-count.ts, build.ts):
// read from the answer's own usage (JSON, a stream's tail, OpenAI's, the Responses API's
// and Anthropic's names), else counted with the tokenizer over the request and the
// answer's text, and marked estimated. Token counts are o200k_base's and cl100k_base's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildRecord } from '../src/logs/build.js';
import type { LogEntry } from '../src/logs/entry.js';
import { answerText, countUsage, encodingFor, inPieces } from '../src/logs/token-count.js';
import { readUsage } from '../src/logs/usage.js';
import { logEntry } from './support/logs.js';

const event = (x: unknown): string => `data: ${JSON.stringify(x)}\n\n`;
const chunk = (content: string, usage?: unknown) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }], ...(usage === undefined ? {} : { usage }) });
const usageChunk = { id: 'c', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } };
const reported = (p: number, c: number, t = p + c) => ({ promptTokens: p, completionTokens: c, totalTokens: t, estimated: false });
const counted = (p: number, c: number) => ({ promptTokens: p, completionTokens: c, totalTokens: p + c, estimated: true });

describe('reading an answer’s usage', () => {
  it('a JSON answer: chat, embeddings (no completion tokens)', () => {
    const chat = JSON.stringify({ choices: [{ message: { content: 'says "usage": {"total_tokens": 999}' } }], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, prompt_tokens_details: { cached_tokens: 2 } } });
    assert.deepEqual(readUsage(chat), reported(5, 7));
    assert.deepEqual(readUsage(JSON.stringify({ object: 'list', data: [], usage: { prompt_tokens: 9, total_tokens: 9 } })), reported(9, 0));
  });

  it('the tail of a stream: the usage chunk before [DONE], after chunks with usage null', () => {
    const stream = event(chunk('a', null)) + event(chunk('b', null)) + event(usageChunk) + 'data: [DONE]\n\n';
    assert.deepEqual(readUsage(stream), reported(5, 7));
    // The tail the relay keeps may begin anywhere, mid-event included.
    assert.deepEqual(readUsage(stream.slice(stream.indexOf('"b"'))), reported(5, 7));
  });

  it('a tail cut inside the usage object, a stream without usage, only nulls: none', () => {
    const stream = event(chunk('a', null)) + event(usageChunk) + 'data: [DONE]\n\n';
    assert.equal(readUsage(stream.slice(stream.indexOf('"prompt_tokens"'))), null);
    assert.equal(readUsage(event(chunk('a')) + 'data: [DONE]\n\n'), null);
    assert.equal(readUsage(event(chunk('a', null)) + event(chunk('b', null)) + 'data: [DONE]\n\n'), null);
    assert.equal(readUsage('{"usage":{}}'), null);
    assert.equal(readUsage(''), null);
  });

  it('the Responses API (input/output tokens, cached ones inside) and Anthropic (cache reads and writes are input too)', () => {
    const completed = 'event: response.completed\n' + event({ type: 'response.completed', response: { usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 4 }, output_tokens: 6, total_tokens: 16 } } });
    assert.deepEqual(readUsage(completed), reported(10, 6, 16));
    assert.deepEqual(readUsage('{"type":"message","usage":{"input_tokens":10,"cache_read_input_tokens":3,"cache_creation_input_tokens":2,"output_tokens":4}}'), reported(15, 4));
  });
});

describe('counting tokens where the answer has no usage', () => {
  it('o200k_base for the gpt-4o generation on, cl100k_base for the rest', async () => {
    for (const m of ['gpt-4o-mini', 'gpt-4.1', 'gpt-5', 'o3-mini', 'openai/gpt-4o', 'gpt-oss-120b']) assert.equal(encodingFor(m), 'o200k_base', m);
    for (const m of ['gpt-4', 'gpt-3.5-turbo', 'claude-sonnet-4', 'llama-3.1-8b', undefined]) assert.equal(encodingFor(m), 'cl100k_base', String(m));
    // こんにちは世界 is 2 tokens in o200k_base, 4 in cl100k_base.
    const ask = (model: string) => countUsage('embeddings', { model, input: 'こんにちは世界' }, null);
    assert.deepEqual(await ask('gpt-4o'), counted(2, 0));
    assert.deepEqual(await ask('gpt-4'), counted(4, 0));
  });

  it('chat: OpenAI’s framing (3 a message, 3 for the reply) around role and content; the streamed answer’s deltas joined', async () => {
    const request = { model: 'gpt-4o', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hello there' }] }], stream: true };
    const stream = event(chunk('[mock] echo:')) + event(chunk(' hello')) + event(chunk(' there')) + 'data: [DONE]\n\n';
    // (3 + 1 + 2) + (3 + 1 + 2) + 3 = 15; "[mock] echo: hello there" is 7.
    assert.deepEqual(await countUsage('chat', request, stream), counted(15, 7));
  });

  it('a JSON answer’s message, tool calls and offered tools count', async () => {
    const call = { id: 't', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello, world!' }] };
    const answer = JSON.stringify({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [call] } }] });
    assert.deepEqual(await countUsage('chat', request, answer), counted(3 + 1 + 4 + 3, 2 + 5));
    const withTools = { ...request, tools: [{ type: 'function', function: { name: 'get_weather' } }] };
    const tools = (await countUsage('chat', withTools, null))!.promptTokens - 11;
    assert.ok(tools > 5, `${tools} tokens for the tools`);
  });

  it('completions: prompts as text or token ids; a stream cut short counts what arrived', async () => {
    const cut = event({ choices: [{ text: 'Hello,' }] }) + event({ choices: [{ text: ' world!' }] }) + 'data: {"choices":[{"te';
    assert.deepEqual(await countUsage('completions', { model: 'gpt-3.5-turbo-instruct', prompt: ['say this', [1, 2, 3]] }, cut), counted(2 + 3, 4));
  });

  it('special-token text is plain text, not an error', async () => {
    assert.deepEqual(await countUsage('completions', { model: 'gpt-4', prompt: '<|endoftext|>' }, null), counted(7, 0));
  });

  it('Responses API input, instructions and streamed output deltas', async () => {
    const request = { model: 'gpt-4o', instructions: 'be brief', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello there' }] }] };
    const stream = 'event: response.output_text.delta\n' + event({ type: 'response.output_text.delta', delta: 'Hello,' }) + event({ type: 'response.output_text.delta', delta: ' world!' });
    assert.deepEqual(await countUsage('proxy', request, stream), counted(2 + 3 + 2, 4));
  });

  it('long texts are counted in slices of at most 256 characters, cut where a space starts a piece: the same count for prose', async () => {
    const { countTokens: o200k } = await import('gpt-tokenizer/encoding/o200k_base');
    const { countTokens: cl100k } = await import('gpt-tokenizer/encoding/cl100k_base');
    const words = ['the', 'gateway', "isn't", 'counting', '12345', 'tokens,', 'naïve', '—', 'déjà', 'vu', '(ok)', 'x  y', 'line\n', '  two', 'émoji 🙂'];
    let prose = '';
    for (let i = 0; prose.length < 20_000; i++) prose += `${words[(i * 7) % words.length]} `;
    for (const count of [o200k, cl100k]) assert.equal(inPieces(prose, (t) => count(t)), count(prose));
    // A run with no space (one piece of 100 k letters: BPE merges cost its square) is cut every 256 characters.
    const sizes: number[] = [];
    inPieces('a'.repeat(100_000), (t) => sizes.push(t.length));
    assert.equal(Math.max(...sizes), 256);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 100_000);
    // As countUsage counts them: a Responses input of such runs is counted, not refused.
    const usage = await countUsage('proxy', { model: 'gpt-4o', input: 'b'.repeat(100_000) }, null);
    assert.ok(usage !== null && usage.promptTokens > 0);
  });

  it('nothing countable (an unknown shape on the proxy): none', async () => {
    assert.equal(await countUsage('proxy', null, '{"data":[1,2]}'), null);
    assert.equal(answerText('not json, not a stream'), '');
  });
});

describe('the usage for the log', () => {
  /** The usage of the record made of a chat entry with this request and answer (head: what the log keeps; tail: the answer's last bytes). */
  async function recorded(request: unknown, head: string, tail: string | null) {
    const body = Buffer.from(JSON.stringify(request));
    const entry: LogEntry = logEntry({ requestBody: body, requestBytes: body.length, answerHead: Buffer.from(head), answerTail: tail === null ? null : Buffer.from(tail) });
    const r = await buildRecord(entry);
    return { promptTokens: r.promptTokens, completionTokens: r.completionTokens, totalTokens: r.totalTokens, estimated: r.tokensEstimated };
  }

  it('the answer’s own when it has it, else counted and marked estimated', async () => {
    const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello, world!' }], stream: true };
    const stream = event(chunk('Hello,', null)) + event(chunk(' world!', null)) + event(usageChunk) + 'data: [DONE]\n\n';
    assert.deepEqual(await recorded(request, stream.slice(0, 100), stream.slice(-300)), reported(5, 7));
    const bare = event(chunk('Hello,')) + event(chunk(' world!')) + 'data: [DONE]\n\n';
    assert.deepEqual(await recorded(request, bare, bare), counted(11, 4));
  });
});
