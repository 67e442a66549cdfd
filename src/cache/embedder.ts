/**
 * The semantic cache's embedding call. The conversation's text goes to the
 * config's `cache.embedding` target, else to the config's first target (the
 * one a fallback tries first) with the request's own provider headers where
 * that target leaves them to the request: one target per config, so every
 * vector of a partition comes from the same model. The call goes through the
 * router like a target (stored credentials, provider translation) but on a
 * plan of its own: one attempt, no retries, no circuit breaker, none of the
 * chat target's param edits. It is not a request of its own: no rate limit,
 * budget or log entry; its time is part of the request's.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { NO_HOOKS } from '../guardrails/hooks.js';
import type { Plan, PlanLeaf, PlanNode } from '../routing/plan.js';
import type { Router } from '../routing/router.js';
import { single as first } from '../shared/headers.js';
import { err, GatewayError, ok, type Result } from '../shared/errors.js';
import { AnswerTooLarge } from '../upstream/answer.js';
import { Cancel } from '../upstream/cancel.js';
import { unitVector } from './vectors.js';

/** Portkey's default for its semantic cache; other providers need `cache.embedding.model`. */
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';
/** The whole call, answer body included: an embedding is small, and a slow one should not hold the request long. */
export const DEFAULT_EMBEDDING_TIMEOUT_MS = 10_000;

export interface EmbeddingRequest {
  workspaceId: string;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface Embedder {
  /** A unit vector of the text, or why there is none. */
  embed(plan: Plan, r: EmbeddingRequest): Promise<Result<Float32Array, GatewayError>>;
}

interface EmbeddingPlan {
  plan: Plan;
  model: string;
  timeoutMs: number;
}

export class RouterEmbedder implements Embedder {
  private readonly plans = new WeakMap<Plan, EmbeddingPlan>();

  constructor(private readonly router: Router) {}

  async embed(plan: Plan, r: EmbeddingRequest): Promise<Result<Float32Array, GatewayError>> {
    const e = this.planOf(plan);
    const body = { model: e.model, input: r.text };
    const h = r.headers;
    const cancel = new Cancel();
    const timer = setTimeout(() => cancel.abort(), e.timeoutMs);
    try {
      const result = await this.router.route(e.plan, {
        endpoint: 'embeddings',
        method: 'POST',
        path: '/embeddings',
        pathname: '/v1/embeddings',
        body,
        sentModel: undefined,
        raw: Buffer.from(JSON.stringify(body)),
        // None of the client's own headers go on: the call is the gateway's.
        headers: {},
        metadata: {},
        workspaceId: r.workspaceId,
        provider: first(h['x-gateway-provider']),
        customHost: first(h['x-gateway-custom-host']),
        authorization: first(h.authorization),
        virtualKey: first(h['x-gateway-virtual-key']),
        forwardHeaders: [],
        timeoutMs: undefined,
        signal: cancel,
      });
      const timedOut = (): Result<never, GatewayError> =>
        err(new GatewayError(408, `embedding timed out after ${e.timeoutMs} ms`, { code: 'request_timeout' }));
      if (result.response === null) return cancel.aborted ? timedOut() : err(result.error!);
      const { statusCode, headers } = result.response;
      let answer: Buffer;
      try {
        answer = result.response.whole ?? (await result.response.body.bytes());
      } catch (e) {
        if (e instanceof AnswerTooLarge) return err(e);
        return cancel.aborted ? timedOut() : err(new GatewayError(502, `embedding answer from ${result.provider} was cut short`, { code: 'upstream_unreachable' }));
      }
      const tr = result.answer;
      if (statusCode < 200 || statusCode >= 300) {
        return err(tr?.error(statusCode, answer, headers) ?? new GatewayError(502, `embeddings endpoint of ${result.provider} answered ${statusCode}: ${answer.toString('utf8', 0, 300)}`));
      }
      // An embeddings answer is read whole (never streamed).
      const text = tr === undefined || tr.streamed ? ok(answer.toString('utf8')) : tr.response(answer, headers);
      return text.ok ? vectorIn(text.value) : text;
    } finally {
      clearTimeout(timer);
    }
  }

  private planOf(plan: Plan): EmbeddingPlan {
    let e = this.plans.get(plan);
    if (e === undefined) {
      e = embeddingPlan(plan);
      this.plans.set(plan, e);
    }
    return e;
  }
}

function embeddingPlan(plan: Plan): EmbeddingPlan {
  const { model = DEFAULT_EMBEDDING_MODEL, request_timeout, ...target } = plan.cache?.embedding ?? {};
  const own = target.provider !== undefined || target.virtual_key !== undefined;
  const { node, path } = own ? { node: target, path: 'config.cache.embedding' } : firstLeaf(plan.root);
  const root: PlanLeaf = {
    kind: 'leaf',
    path,
    node,
    weight: 1,
    retry: undefined,
    timeoutMs: undefined,
    edits: null,
    forwardHeaders: [],
    cb: undefined,
    circuitKey: `${plan.identity}:${path}`,
  };
  return {
    plan: { root, passthrough: false, strict: undefined, hooks: NO_HOOKS, cache: undefined, identity: plan.identity, configId: plan.configId },
    model,
    timeoutMs: request_timeout ?? DEFAULT_EMBEDDING_TIMEOUT_MS,
  };
}

function firstLeaf(n: PlanNode): PlanLeaf {
  return n.kind === 'leaf' ? n : firstLeaf(n.targets[0]!);
}

/** The first vector of an OpenAI-shaped embeddings answer. */
function vectorIn(text: string): Result<Float32Array, GatewayError> {
  let values: unknown;
  try {
    values = (JSON.parse(text) as { data?: { embedding?: unknown }[] }).data?.[0]?.embedding;
  } catch {
    // not JSON: no vector, as below
  }
  const vector = Array.isArray(values) ? unitVector(values) : null;
  return vector === null ? err(new GatewayError(502, 'embeddings answer holds no usable vector', { code: 'invalid_embedding' })) : ok(vector);
}
