/**
 * Checks that post the hook's event to a URL of the config's:
 *
 * - default.webhook (`webhookURL`, `headers`, `timeout` ms, default 3000):
 *   the webhook answers `{verdict, data?, transformedData?}`; its verdict is
 *   the check's, and `transformedData.request.json` (before the request) or
 *   `transformedData.response.json` (after) replaces the whole request the
 *   provider receives or the answer the client gets.
 * - default.log (`logURL`, `headers`, `timeout`): posts the event and
 *   always passes; a post that fails is an error (which fails nothing unless
 *   failOnError).
 *
 * The event is Portkey's: `request` {json, text, isStreamingRequest},
 * `response` {json, text, statusCode} (after the request), `provider`,
 * `requestType`, `metadata`, `eventType`. The client's headers are not in
 * it, and the configured headers (a webhook's secret) are in neither the
 * results nor the errors.
 */
import { Type } from '@sinclair/typebox';
import { forwardProblem, HEADER_VALUE } from '../../shared/headers.js';
import { HEADER_SAFE, int, nonEmptyStr, optional, str } from '../../shared/json-schema.js';
import { upstreamUrlProblem } from '../../shared/upstream-url.js';
import type { CheckDefinition, ParamProblem, Subject, Verdict } from '../check.js';
import { call, jsonOf, originOf } from '../outbound.js';
import { textsOf } from '../text.js';

/** Portkey's default wait for a webhook. */
const DEFAULT_TIMEOUT_MS = 3000;
/** A webhook's answer may carry a whole transformed body: as large as an answer output checks read. */
const MAX_WEBHOOK_ANSWER_BYTES = 10 * 1024 * 1024;
/** A log collector's answer is not read for anything. */
const MAX_LOG_ANSWER_BYTES = 64 * 1024;
/** The webhook's own `data` is kept in the results up to this size (JSON). */
const MAX_KEPT_DATA = 16 * 1024;


interface Posting {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** Headers as an object, or (as Portkey takes them) its JSON text. */
const headersParameter = Type.Union([Type.Record(Type.String(), str), str], { message: 'must be an object of header names to values, or its JSON text' });

function prepared(url: string, urlKey: string, headers: unknown, timeout: number | undefined): { ok: true; value: Posting } | { ok: false; problem: ParamProblem } {
  const bad = upstreamUrlProblem(url);
  if (bad !== null) return { ok: false, problem: { path: [urlKey], message: bad } };
  let h: unknown = headers ?? {};
  if (typeof h === 'string') {
    try {
      h = JSON.parse(h) as unknown;
    } catch {
      return { ok: false, problem: { path: ['headers'], message: 'is not valid JSON' } };
    }
    if (typeof h !== 'object' || h === null || Array.isArray(h)) return { ok: false, problem: { path: ['headers'], message: 'must be a JSON object of header names to values' } };
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h as Record<string, unknown>)) {
    // What may not be forwarded to a provider may not be sent here either: the same call.
    const refused = forwardProblem(name.toLowerCase());
    if (refused !== null) return { ok: false, problem: { path: ['headers', name], message: refused } };
    if (typeof value !== 'string') return { ok: false, problem: { path: ['headers', name], message: 'must be a string' } };
    if (!HEADER_VALUE.test(value)) return { ok: false, problem: { path: ['headers', name], message: HEADER_SAFE.message } };
    out[name.toLowerCase()] = value;
  }
  return { ok: true, value: { url, headers: out, timeoutMs: timeout ?? DEFAULT_TIMEOUT_MS } };
}

const timeout = int(1, 600_000);

/** The event a webhook or log collector receives. */
function event(s: Subject): Record<string, unknown> {
  const after = s.kind === 'after';
  return {
    request: {
      json: s.request,
      text: after ? textsOf('before', s.endpoint, s.request).join('\n') : s.text,
      isStreamingRequest: s.request.stream === true,
    },
    response: { json: s.answer, text: after ? s.text : null, statusCode: after ? 200 : null },
    provider: s.reach.provider ?? null,
    requestType: s.requestType,
    metadata: s.metadata,
    eventType: after ? 'afterRequestHook' : 'beforeRequestHook',
  };
}

export const webhook: CheckDefinition<Posting> = {
  hooks: ['before', 'after'],
  parameters: { webhookURL: nonEmptyStr, ...optional({ headers: headersParameter, timeout }) },
  prepare: (p) => prepared(p.webhookURL as string, 'webhookURL', p.headers, p.timeout as number | undefined),
  async run(s, p): Promise<Verdict> {
    const where = `the webhook at ${originOf(p.url)}`;
    const answer = jsonOf(await call({ url: p.url, headers: p.headers, json: event(s), timeoutMs: p.timeoutMs, maxBytes: MAX_WEBHOOK_ANSWER_BYTES }), where);
    if (typeof answer.verdict !== 'boolean') throw new Error(`${where} answered without a boolean verdict`);
    const v: Verdict = {
      verdict: answer.verdict,
      explanation: answer.verdict ? 'the webhook passed it' : 'the webhook failed it',
      data: { webhook: originOf(p.url), ...kept(answer.data) },
    };
    const side = s.kind === 'before' ? 'request' : 'response';
    const json = (answer.transformedData as Record<string, Record<string, unknown> | undefined> | undefined)?.[side]?.json;
    if (json !== undefined && json !== null) {
      if (typeof json !== 'object' || Array.isArray(json)) throw new Error(`${where} answered a transformedData.${side}.json that is not a JSON object`);
      if (s.kind === 'before') v.request = json as Record<string, unknown>;
      else v.answer = json as Record<string, unknown>;
    }
    return v;
  },
};

/** The webhook's own data, unless it is too large to keep with every result. */
function kept(data: unknown): Record<string, unknown> {
  if (data === undefined) return {};
  return JSON.stringify(data).length <= MAX_KEPT_DATA ? { responseData: data } : { responseData: null, responseDataOmitted: `larger than ${MAX_KEPT_DATA} characters` };
}

export const log: CheckDefinition<Posting> = {
  hooks: ['before', 'after'],
  parameters: { logURL: nonEmptyStr, ...optional({ headers: headersParameter, timeout }) },
  prepare: (p) => prepared(p.logURL as string, 'logURL', p.headers, p.timeout as number | undefined),
  async run(s, p): Promise<Verdict> {
    await call({ url: p.url, headers: p.headers, json: event(s), timeoutMs: p.timeoutMs, maxBytes: MAX_LOG_ANSWER_BYTES });
    return { verdict: true, explanation: `the event was posted to ${originOf(p.url)}`, data: { logged: originOf(p.url) } };
  },
};
