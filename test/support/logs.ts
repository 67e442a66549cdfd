/** Complete log records for tests that write the log store directly. */
import { LOG_FORMAT, type LogRecord } from '../../src/logs/record.js';
import { newId } from '../../src/store/ids.js';

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
    requestHeaders: { 'content-type': 'application/json' },
    requestBody: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
    responseBody: '{"id":"chatcmpl-1","choices":[]}',
    logFormat: LOG_FORMAT,
    ...overrides,
  };
}
