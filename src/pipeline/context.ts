/**
 * One request on its way through the pipeline's stages (pipeline.ts): what
 * the HTTP layer knew on arrival, then what each stage adds — the gateway
 * headers and admission, the plan, the body, the cache ticket, the budget
 * reservation, the routing result, the answer — and how it ended. The record
 * stage reads it all at the end; nothing here outlives the request.
 *
 * One object per request, its fields declared up front (one hidden class),
 * so stages write fields instead of passing values along. A field is null
 * until the stage that fills it has run; a later stage reads it with `!`
 * (the order is fixed in pipeline.ts, requestPath).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AnswerKeeper, CacheTicket, Served } from '../cache/answer-cache.js';
import type { Arrival } from '../http/server.js';
import type { GatewayHeaders } from '../http/headers.js';
import { sendError } from '../http/respond.js';
import type { AnswerCapture } from '../logs/capture.js';
import type { Price } from '../catalog/price.js';
import type { LoadedPrompt } from '../prompts/load.js';
import { sentPrice } from '../routing/credentials.js';
import type { Plan } from '../routing/plan.js';
import type { RouteResult } from '../routing/router.js';
import type { Endpoint } from '../shared/endpoint.js';
import type { CacheStatus } from '../shared/cache-status.js';
import type { GatewayError } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { RequestSpan } from '../tracing/tracer.js';
import type { HookLog } from '../guardrails/engine.js';
import type { Admission, AnswerUsage } from './limits.js';

/** What a stage tells the pipeline: go on to the next stage, or the request is answered. */
export type Outcome = 'next' | 'done';

/**
 * The answer on its way to the client, in OpenAI's shape (a translated
 * provider's already translated): what after-hooks may act on and the respond
 * stage writes.
 */
export interface Answer {
  status: number;
  /** The answer's own headers: the provider's (hop-by-hop ones are dropped when written), or those of a translated answer. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The bytes as they stream, or the whole text the gateway holds. */
  body: Readable | string;
  /** It carries stream usage the gateway asked for and the client did not: stripped on the way out. */
  addedUsage: boolean;
}

/** This turn of POST /responses, to be stored with its answer (responses.ts, response-keeper.ts). */
export interface ResponseTurn {
  /** This turn's input items, as /input_items lists them (each with an id). */
  input: Record<string, unknown>[];
}

export class RequestContext {
  // Known on arrival.
  readonly endpoint: Endpoint;
  /** Path after /v1, query included. */
  readonly path: string;
  readonly pathname: string;
  readonly traceId: string;
  /** performance.now() on arrival. */
  readonly startedAt: number;
  readonly key: ApiKeyRecord;
  readonly span: RequestSpan;
  /** A prompt run: the prompt the path names; null otherwise. */
  readonly promptRef: string | null;

  // admit
  gateway: GatewayHeaders | null = null;
  admission: Admission | null = null;
  // plan
  plan: Plan | null = null;
  configId: string | null = null;
  // prompt: the prompt the request runs (a run, or its config's prompt_id), rendered into the body
  prompt: LoadedPrompt | null = null;
  // body
  /** The client's body bytes as read (null when streamed straight through or absent). */
  requestBody: Buffer | null = null;
  /** What is sent on: the bytes read, or the request itself for a proxied body streamed once. */
  raw: Buffer | Readable | null = null;
  /** The parsed JSON body of a model endpoint; null on the proxy and in pass-through mode. */
  body: Record<string, unknown> | null = null;
  /**
   * A JSON body the gateway sends on as it came (pass-through mode, the
   * generic proxy), parsed for what it names — the model its allow-lists and
   * budgets apply to — and never changed; null otherwise.
   */
  peeked: Record<string, unknown> | null = null;
  /** The model the client asked for; the answering attempt's model wins when known. */
  model: string | undefined = undefined;
  // before-hooks and after-hooks: what the config's hooks found, when it has any
  hooks: HookLog | null = null;
  // responses: this turn of POST /responses, when it is to be stored
  responseTurn: ResponseTurn | null = null;
  // cache
  cacheStatus: CacheStatus | null = null;
  cache: CacheTicket | null = null;
  /** A cache hit: who first answered it. */
  served: Served | null = null;
  // reserve
  usage: AnswerUsage | null = null;
  // route
  result: RouteResult | null = null;
  answer: Answer | null = null;
  keeper: AnswerKeeper | null = null;
  // respond and how it ended
  status = 0;
  /** The gateway's own error answer. */
  error: GatewayError | null = null;
  /** The answer as it passed (streamed), or its text (answers the gateway held whole). */
  capture: AnswerCapture | null = null;
  answerText: string | null = null;
  /** The client left before the answer ended. */
  cut = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    arrival: Arrival,
    span: RequestSpan,
  ) {
    this.endpoint = arrival.endpoint;
    this.path = arrival.path;
    this.pathname = arrival.pathname;
    this.traceId = arrival.ids.traceId;
    this.startedAt = arrival.startedAt;
    this.key = arrival.key;
    this.span = span;
    this.promptRef = arrival.promptRef ?? null;
  }

  /** The provider that answered (or first answered a cached answer). */
  get provider(): string | undefined {
    return this.result?.provider ?? this.served?.provider;
  }

  /** The model the answering attempt sent, else the one asked for. */
  get sentModel(): string | undefined {
    return this.result?.model ?? this.model;
  }

  /** The price of what the answering attempt sent; null when unpriced or nothing was sent. */
  get sentPrice(): Price | null {
    const r = this.result;
    return r === null || r.provider === undefined || r.model === undefined ? null : sentPrice(r.provider, r.model, r.credential);
  }

  /**
   * The one way a stage refuses: the contract's envelope (and `extra`
   * fields beside its `error`) with the gateway's headers known so far
   * (trace id, quota, cache status, routing); the request ends here.
   */
  refuse(error: GatewayError, extra?: Record<string, unknown>): Outcome {
    const res = this.res;
    const headers = this.gatewayHeaders({});
    for (const name in headers) res.setHeader(name, headers[name]!);
    sendError(res, error, extra);
    this.status = error.status;
    this.error = error;
    return 'done';
  }

  /**
   * The contract's response headers, added to `out` after the quota headers:
   * trace id, cache status, and once routed, who answered, after how many
   * retries, by which target.
   */
  gatewayHeaders(out: OutgoingHttpHeaders): OutgoingHttpHeaders {
    const quota = this.admission?.headers;
    if (quota != null) for (const name in quota) out[name] = quota[name];
    out['x-gateway-trace-id'] = this.traceId;
    const provider = this.provider;
    if (provider !== undefined) out['x-gateway-provider'] = provider;
    out['x-gateway-cache-status'] = this.cacheStatus ?? 'DISABLED';
    const r = this.result ?? this.served;
    if (r !== null) {
      out['x-gateway-retry-attempt-count'] = String(this.result?.retries ?? 0);
      out['x-gateway-last-used-option-index'] = r.path;
    }
    return out;
  }
}

/** One named step of the request path, run over the request's context. Synchronous where it can be: no promise per request for nothing. */
export interface Stage {
  readonly name: string;
  run(ctx: RequestContext): Outcome | Promise<Outcome>;
}

/** The record stage (record.ts): runs once for every request, however it ended. */
export interface RecordStage {
  record(ctx: RequestContext): void;
}

/** Runs `stages` from the `from`th in order until one answers the request; synchronous while they are. */
export function runStages(stages: readonly Stage[], ctx: RequestContext, from = 0): Outcome | Promise<Outcome> {
  for (let i = from; i < stages.length; i++) {
    const out = stages[i]!.run(ctx);
    if (out instanceof Promise) return out.then((o) => (o === 'done' ? o : runStages(stages, ctx, i + 1)));
    if (out === 'done') return out;
  }
  return 'next';
}
