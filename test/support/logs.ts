/** Complete log records for tests that write the log store directly, entries for the log writer, and a request's entry read back over HTTP. */
import assert from 'node:assert/strict';
import type { LogEntry } from '../../src/logs/entry.js';
import { LOG_FORMAT, type LogRecord } from '../../src/store/log-record.js';
import { newId } from '../../src/store/ids.js';
import type { TestGateway } from './gateway.js';
import { expectJson } from './tenants.js';

export function logRecord(overrides: Partial<LogRecord> & { workspaceId: string }): LogRecord {
  const createdAtMs = overrides.createdAtMs ?? Date.now();
  return {
    id: newId(createdAtMs),
    createdAtMs,
    traceId: `trace-${Math.random().toString(36).slice(2, 10)}`,
    spanId: null,
    parentSpanId: null,
    spanName: null,
    apiKeyId: 'key-test',
    userId: null,
    configId: null,
    virtualKeyId: null,
    integrationId: null,
    promptId: null,
    promptVersion: null,
    provider: 'openai',
    model: 'gpt-4o-mini',
    endpoint: 'chat',
    method: 'POST',
    path: '/chat/completions',
    status: 200,
    latencyMs: 100,
    upstreamTtfbMs: 50,
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    tokensEstimated: false,
    costUsd: 0.001,
    cacheStatus: 'MISS',
    retryCount: 0,
    lastUsedOptionIndex: 'config',
    metadata: null,
    error: null,
    hooks: null,
    requestHeaders: { 'content-type': 'application/json' },
    requestBody: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
    responseBody: '{"id":"chatcmpl-1","choices":[]}',
    logFormat: LOG_FORMAT,
    ...overrides,
  };
}

/** A chat request's entry as the request thread makes it: its answer reports 10 + 5 tokens. */
export function logEntry(over: Partial<LogEntry> = {}): LogEntry {
  return {
    createdAtMs: 1_760_000_000_000,
    latencyMs: 12.6,
    traceId: 'trace-1',
    spanId: 'span-1',
    parentSpanId: null,
    spanName: 'chat',
    workspaceId: 'default',
    apiKeyId: 'key-1',
    userId: null,
    configId: 'cfg-1',
    virtualKeyId: 'vk-1',
    integrationId: null,
    promptId: null,
    promptVersion: null,
    pricingMultiplier: 2,
    customPricing: null,
    provider: 'openai',
    model: 'gpt-4o-mini',
    endpoint: 'chat',
    method: 'POST',
    path: '/chat/completions',
    status: 200,
    upstreamTtfbMs: 3.4,
    cacheStatus: 'MISS',
    retryCount: 1,
    lastUsedOptionIndex: 'config.targets[1]',
    metadata: { team: 'a' },
    gatewayError: null,
    hooks: null,
    cut: false,
    headers: { 'content-type': 'application/json', 'user-agent': 'Bearer abcdefghijklmnop' },
    contentType: 'application/json',
    bodies: true,
    requestBody: Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"api_key":"x"}'),
    requestBytes: 82,
    answerText: null,
    answerHead: Buffer.from('{"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}'),
    answerTail: null,
    ...over,
  };
}

/** The log entry of the request with `traceId` (GET /v1/logs/:id), once the writer has written it (polled, at most 5 s). */
export async function logOf(gw: TestGateway, traceId: string): Promise<Record<string, any>> {
  for (let i = 0; ; i++) {
    const page = await expectJson(await gw.call(`/logs?trace_id=${traceId}`), 200);
    if (page.data.length > 0) return expectJson(await gw.call(`/logs/${page.data[0].id}`), 200);
    if (i === 100) assert.fail(`no log for ${traceId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
