/**
 * The config's hooks and guardrails (guardrails/) as steps of the hooks
 * stages, for chat, completions, responses and embeddings (before the
 * request only); in pass-through mode, POST /v1/responses's peeked JSON body
 * is judged but never rewritten (a rewriting hook there is a 400):
 *
 * - input: before the cache is asked, the before-request hooks judge the
 *   request; a denying failure is a 446 with hook_results, and transforms
 *   change the body the cache keys and the provider receives.
 * - output: the after-request hooks judge a whole 200 answer (a translated
 *   answer is already text; a relayed JSON answer is read whole, only when
 *   there is something to do). A denying failure is a 446; a failure without
 *   deny, here or before, answers 246 with the answer and its hook_results.
 *
 * - streams: judged as they pass (guardrails/stream.ts), the client's
 *   status sent first; a denial ends the stream with an error event, a
 *   stream without one ends with its hook_results. A streamed request whose
 *   output hooks would rewrite the answer is a 400 before anything is sent.
 *
 * Configs without hooks cost one check per step: without output hooks, a
 * stream passes with nothing added to its pipe.
 */
import type { Readable } from 'node:stream';
import type { AnswerKeeper } from '../cache/answer-cache.js';
import type { HookEndpoint, Reach } from '../guardrails/check.js';
import { HookLog, runHooks, type HookInput, type HookRun } from '../guardrails/engine.js';
import type { Hook } from '../guardrails/hooks.js';
import type { CredentialSource } from '../routing/credentials.js';
import { isHopByHop } from '../routing/headers.js';
import { StreamGuard } from '../guardrails/stream.js';
import { isEventStreamType, isJsonType, isReadable } from '../shared/content-type.js';
import { GatewayError, invalid } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import { through } from '../shared/through.js';
import type { Answer, Outcome, RequestContext, Stage } from './context.js';

/** A relayed answer larger than this (a stream's text longer) is not held for output checks (the request fails with a 502). */
export const MAX_CHECKED_ANSWER_BYTES = 10 * 1024 * 1024;

const DENIED = new GatewayError(446, 'The guardrail checks defined in the config failed. You can find more information in the `hook_results` object.', {
  type: 'hooks_failed',
  code: 'hooks_failed',
});

const STREAM_TOO_LONG = new GatewayError(502, `the streamed answer's text is longer than the ${MAX_CHECKED_ANSWER_BYTES} characters output guardrails judge`, {
  code: 'answer_too_large_for_guardrails',
});

/** `credentials`: the stored credentials third-party checks call their APIs with. */
export function inputGuardrails(credentials: CredentialSource): Stage {
  return {
    name: 'input-guardrails',
    run(ctx) {
      const all = ctx.plan!.hooks;
      if (all.before.length === 0 && all.transformAt.after === null) return 'next';
      const on = judged(ctx);
      if (on === null) return 'next';
      const json = (ctx.body ?? ctx.peeked)!;
      const rewrite = all.transformAt;
      if (rewrite.after !== null && json.stream === true) {
        // Text a streaming client already has cannot be rewritten: refused before the provider is called.
        const { at, check } = rewrite.after;
        return ctx.refuse(invalid(`stream: ${at} rewrites the answer (${check}), which cannot apply to a streamed answer; ask without stream, or use a config without it`, 'stream'));
      }
      if (ctx.body === null && rewrite.before !== null) {
        const { at, check } = rewrite.before;
        return ctx.refuse(invalid(`${at}: rewrites the request (${check}), which pass-through mode sends on as it came; use a config without it for ${ctx.pathname}`, at));
      }
      return all.before.length === 0 ? 'next' : beforeRequest(ctx, on, all.before, credentials);
    },
  };
}

/**
 * What hooks judge of this request: a model endpoint's parsed body, or the
 * generic proxy's JSON body (ctx.peeked) on a path whose text is known;
 * null when there is none (pass-through mode, other proxied paths).
 */
function judged(ctx: RequestContext): HookEndpoint | null {
  if (ctx.body !== null) return ctx.endpoint as HookEndpoint;
  if (ctx.endpoint === 'responses' && ctx.peeked !== null) return 'responses';
  return null;
}

function beforeRequest(ctx: RequestContext, on: HookEndpoint, hooks: readonly Hook[], credentials: CredentialSource): Outcome | Promise<Outcome> {
  const run = runHooks(hooks, hookInput(ctx, on, 'before', null, credentials));
  return run instanceof Promise ? run.then((r) => judgedBefore(ctx, r)) : judgedBefore(ctx, run);
}

function judgedBefore(ctx: RequestContext, run: HookRun): Outcome {
  const log = (ctx.hooks = new HookLog());
  log.add('before', run);
  if (run.denied) return ctx.refuse(DENIED, { hook_results: log.answered() });
  if (run.json !== ctx.body && ctx.body !== null) {
    // Transformed: the cache keys, and the provider receives, the new body.
    ctx.body = run.json;
    ctx.raw = Buffer.from(JSON.stringify(run.json));
    if (typeof run.json.model === 'string') ctx.model = run.json.model;
  }
  return 'next';
}

export function outputGuardrails(credentials: CredentialSource): Stage {
  return {
    name: 'output-guardrails',
    run(ctx) {
      const on = judged(ctx);
      const hooks = on === null || on === 'embeddings' ? [] : ctx.plan!.hooks.after;
      const failedBefore = ctx.hooks?.failed === true;
      if ((hooks.length === 0 && !failedBefore) || on === null) return 'next';
      const a = ctx.answer!;
      // As Portkey's: hooks judge answers, not a provider's errors.
      if (a.status !== 200) return 'next';
      // The Responses API streams events of its own: a proxied stream is not judged.
      if (isEventStream(a) && hooks.length > 0 && on !== 'responses') return guardStream(ctx, a, on, hooks, credentials);
      if (!isWhole(a)) {
        if (failedBefore) {
          a.status = ctx.status = 246;
          ctx.keeper = UNKEPT;
        }
        return 'next';
      }
      return afterRequest(ctx, a, on, hooks, credentials);
    },
  };
}

async function afterRequest(ctx: RequestContext, a: Answer, on: HookEndpoint, hooks: readonly Hook[], credentials: CredentialSource): Promise<Outcome> {
  const text = typeof a.body === 'string' ? a.body : await readWhole(a.body, MAX_CHECKED_ANSWER_BYTES);
  if (text === null) {
    // The provider broke off: as the route stage does with a cut translated answer.
    ctx.res.destroy();
    ctx.cut = true;
    return 'done';
  }
  if (text === TOO_LARGE) {
    void ctx.usage!.keep();
    return ctx.refuse(new GatewayError(502, `the answer is larger than the ${MAX_CHECKED_ANSWER_BYTES} bytes output guardrails read`, { code: 'answer_too_large_for_guardrails' }));
  }
  const answer = jsonObject(text);
  const log = (ctx.hooks ??= new HookLog());
  let out = answer;
  if (answer !== null && hooks.length > 0) {
    const run = await runHooks(hooks, hookInput(ctx, on, 'after', answer, credentials));
    log.add('after', run);
    if (run.denied) {
      // The provider answered: what it used is charged, though the client does not get it.
      await ctx.usage!.settle(text, () => text, ctx);
      return ctx.refuse(DENIED, { hook_results: log.answered() });
    }
    out = run.json;
  }
  const body = answer === null ? text : log.failed ? JSON.stringify({ ...out, hook_results: log.answered() }) : out !== answer ? JSON.stringify(out) : text;
  if (body !== text) ctx.keeper = UNKEPT;
  ctx.status = log.failed ? 246 : 200;
  ctx.answer = { status: ctx.status, headers: wholeHeaders(a.headers), body, addedUsage: false };
  return 'next';
}

/**
 * A streamed answer judged as it passes (guardrails/stream.ts): its status
 * and headers go out first; a denial ends it with an error event, and the
 * log records a 446. Not cached: a hit would replay it without its hooks.
 */
function guardStream(ctx: RequestContext, a: Answer, on: HookEndpoint, hooks: readonly Hook[], credentials: CredentialSource): Outcome {
  const log = (ctx.hooks ??= new HookLog());
  if (log.failed) a.status = ctx.status = 246;
  const guard = new StreamGuard({
    hooks,
    window: ctx.plan!.hooks.streamWindow,
    input: hookInput(ctx, on, 'after', null, credentials),
    denied: DENIED,
    maxChars: MAX_CHECKED_ANSWER_BYTES,
    tooLong: STREAM_TOO_LONG,
    failed(error) {
      ctx.status = error.status;
      ctx.error = error;
    },
    judged(run) {
      log.add('after', run);
      if (run.denied) {
        ctx.status = DENIED.status;
        ctx.error = DENIED;
      }
      return log.answered();
    },
  });
  a.body = through(a.body as Readable, guard);
  // The guard adds an event (or cuts the stream short): a length the provider sent no longer holds.
  a.headers = wholeHeaders(a.headers);
  ctx.keeper = UNKEPT;
  return 'next';
}

/** A readable (not compressed) event stream. */
function isEventStream(a: Answer): boolean {
  return typeof a.body !== 'string' && isReadable(a.headers) && isEventStreamType(a.headers['content-type']);
}

function hookInput(ctx: RequestContext, endpoint: HookEndpoint, kind: 'before' | 'after', answer: Record<string, unknown> | null, credentials: CredentialSource): HookInput {
  const request = (ctx.body ?? ctx.peeked)!;
  return {
    kind,
    endpoint,
    requestType: requestType(endpoint, request.stream === true),
    model: ctx.model,
    metadata: ctx.gateway!.metadata,
    request,
    answer,
    reach: new RequestReach(ctx, kind, credentials),
  };
}

/** Portkey's name of the request type. */
function requestType(endpoint: HookEndpoint, stream: boolean): string {
  if (endpoint === 'embeddings') return 'embed';
  if (endpoint === 'responses') return 'createModelResponse';
  if (endpoint === 'chat') return stream ? 'stream-chatComplete' : 'chatComplete';
  return stream ? 'stream-complete' : 'complete';
}

/** What checks that call out may use: the client's headers, the provider, the workspace's stored credentials; read only by the checks that use them. */
class RequestReach implements Reach {
  constructor(
    private readonly ctx: RequestContext,
    private readonly kind: 'before' | 'after',
    private readonly credentials: CredentialSource,
  ) {}

  get headers(): Reach['headers'] {
    return this.ctx.req.headers;
  }

  get provider(): string | undefined {
    return this.kind === 'after' ? this.ctx.provider : providerBefore(this.ctx);
  }

  async credential(kind: 'virtual_key' | 'provider', ref: string): ReturnType<Reach['credential']> {
    return this.credentials.resolve(this.ctx.key.workspaceId, kind, ref);
  }
}

/** Before the request, the provider is known when the plan has one target naming it, or leaving it to x-gateway-provider; not behind stored credentials. */
function providerBefore(ctx: RequestContext): string | undefined {
  const root = ctx.plan!.root;
  if (root.kind !== 'leaf' || root.node.virtual_key !== undefined) return undefined;
  const name = root.node.provider ?? (ctx.req.headers['x-gateway-virtual-key'] === undefined ? single(ctx.req.headers['x-gateway-provider']) : undefined);
  return name?.startsWith('@') === false ? name : undefined;
}

/** Text the gateway holds, or a relayed JSON answer it can read (not compressed). */
function isWhole(a: Answer): boolean {
  return typeof a.body === 'string' || (isReadable(a.headers) && isJsonType(a.headers['content-type']));
}

/** A relayed answer's headers for a body the gateway changed (whole text for a stream, a guarded stream): its connection's headers and length go. */
function wholeHeaders(h: Answer['headers']): Answer['headers'] {
  const out: Record<string, string | string[] | undefined> = {};
  for (const name in h) if (!isHopByHop(name) && name !== 'content-length') out[name] = h[name];
  return out;
}

function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** For an answer the hooks changed or failed: a cache hit would replay it without them. */
const UNKEPT: AnswerKeeper = { watch: (body) => body, keep: async () => {} };

const TOO_LARGE = Symbol('too large');

/** The body as text; null when the stream failed; TOO_LARGE (the stream stopped) past `limit` bytes. */
async function readWhole(body: Readable, limit: number): Promise<string | null | typeof TOO_LARGE> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      total += (chunk as Buffer).length;
      if (total > limit) {
        body.destroy();
        return TOO_LARGE;
      }
      chunks.push(chunk as Buffer);
    }
  } catch {
    return null;
  }
  return Buffer.concat(chunks).toString('utf8');
}
