/**
 * /v1/logs: the request logs, newest first (scope logs.list), one log with
 * its headers and bodies (logs.view), and grouped aggregates of log rows
 * (analytics.ts). Filters in log-filter.ts; who sees what in log-access.ts.
 * A log the caller may not see does not exist for them (404).
 */
import { unpackResults } from '../guardrails/log-form.js';
import type { LogRecord } from '../store/log-record.js';
import type { LogScope, LogSummary } from '../store/logs.js';
import { notFound } from './access.js';
import { groupRoute } from './analytics.js';
import { listReply, queryOf, reply } from './input.js';
import { LOG_FILTER_PARAMS, logFilter } from './log-filter.js';
import { logRead, logScope } from './log-access.js';
import { route, type Route } from './router.js';

function logView(l: LogSummary, scope: LogScope): Record<string, unknown> {
  const out: Record<string, unknown> = {
    object: 'log',
    id: l.id,
    created_at: Math.floor(l.createdAtMs / 1000),
    created_at_ms: l.createdAtMs,
    trace_id: l.traceId,
    span_id: l.spanId,
    parent_span_id: l.parentSpanId,
    span_name: l.spanName,
    workspace_id: l.workspaceId,
    api_key_id: l.apiKeyId,
    config_id: l.configId,
    virtual_key_id: l.virtualKeyId,
    integration_id: l.integrationId,
    prompt_id: l.promptId,
    prompt_version: l.promptVersion,
    provider: l.provider,
    model: l.model,
    endpoint: l.endpoint,
    method: l.method,
    path: l.path,
    status: l.status,
    latency_ms: l.latencyMs,
    upstream_ttfb_ms: l.upstreamTtfbMs,
    prompt_tokens: l.promptTokens,
    completion_tokens: l.completionTokens,
    total_tokens: l.totalTokens,
    tokens_estimated: l.tokensEstimated,
    cost: l.costUsd,
    cost_currency: 'USD',
    cache_status: l.cacheStatus,
    retry_count: l.retryCount,
    last_used_option_index: l.lastUsedOptionIndex,
    error: l.error,
    log_format: l.logFormat,
  };
  // Hidden metadata is absent, not null: null would claim the request had none.
  if (!scope.hideMetadata.includes(l.workspaceId)) out.metadata = l.metadata;
  return out;
}

/** A stored body as JSON when it is JSON (the usual case), else as the text it is (SSE, cut bodies). */
function bodyView(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function detailView(l: LogRecord, scope: LogScope): Record<string, unknown> {
  return {
    ...logView(l, scope),
    request: { headers: l.requestHeaders, body: bodyView(l.requestBody) },
    response: { body: bodyView(l.responseBody) },
    hook_results: l.hooks === null ? null : unpackResults(l.hooks.results),
  };
}

export const logRoutes: Route[] = [
  route({
    method: 'GET',
    path: '/logs',
    description: 'Lists request logs, newest first, filtered by time, provider, model, trace, key, status, metadata and guardrail verdicts.',
    query: queryOf(LOG_FILTER_PARAMS),
    scope: 'logs.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const filter = logFilter(query);
      if (!filter.ok) return filter;
      const read = await logScope(deps.store, caller, 'logs', query.get('workspace_id') ?? undefined);
      if (!read.ok) return read;
      const { scope, workspaceId } = read.value;
      const logs = await logRead(() => deps.store.logs.list({ ...filter.value, workspaceId }, scope, page));
      return logs.ok ? listReply(logs.value, (l) => logView(l, scope)) : logs;
    },
  }),
  route({
    method: 'GET',
    path: '/logs/:id',
    description: 'One request log with its headers and bodies.',
    scope: 'logs.view',
    async handler({ caller, params }, deps) {
      const read = await logScope(deps.store, caller, 'logs', undefined);
      if (!read.ok) return read;
      const log = await logRead(() => deps.store.logs.get(params.id!, read.value.scope));
      if (!log.ok) return log;
      return log.value === null ? { ok: false, error: notFound('log', params.id!) } : reply(200, detailView(log.value, read.value.scope));
    },
  }),
  groupRoute('/logs/groups/:groupBy', 'logs.list', 'logs', 'Aggregates of the request logs grouped by groupBy, with the filters of GET /logs.'),
];
