/**
 * Body: a model endpoint's body read (bounded by GATEWAY_MAX_BODY_BYTES),
 * parsed and validated; in pass-through mode it is sent on as it came, only
 * peeked at. The generic proxy's JSON bodies are read and peeked at too (the
 * model they name is held to the same allow-lists and budgets); its other
 * bodies stream straight through unless the plan may send them twice
 * (retries, fallback), when one copy is kept.
 */
import { parseJson, readBody, streamWithin } from '../http/body.js';
import type { Plan } from '../routing/plan.js';
import { mayRepeat } from '../routing/router.js';
import type { ModelEndpoint } from '../shared/endpoint.js';
import { isJsonType } from '../shared/content-type.js';
import { invalid, type GatewayError, type Result } from '../shared/errors.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import { validateBody } from './validation.js';

/**
 * A step between parsing and validation that makes the body the request
 * sends from the one the client sent (a prompt rendered: prompt.ts); null
 * leaves the client's.
 */
export type BodyMaker = (ctx: RequestContext, parsed: unknown) => Result<Record<string, unknown>> | null;

export function body(maxBodyBytes: number, make: BodyMaker = () => null): Stage {
  return {
    name: 'body',
    run(ctx) {
      const plan = ctx.plan!;
      const endpoint = ctx.endpoint;
      if (endpoint !== 'proxy') return modelBody(ctx, maxBodyBytes, endpoint, plan, make);
      const h = ctx.req.headers;
      if (h['content-length'] === undefined && h['transfer-encoding'] === undefined) return 'next';
      if (isJsonType(h['content-type'])) return peeked(ctx, maxBodyBytes);
      // A body declared over the limit is refused by the read, before a byte of it is read.
      if (mayRepeat(plan.root) || Number(h['content-length']) > maxBodyBytes) return read(ctx, maxBodyBytes);
      // Streamed straight through (one attempt only); without a length, cut off past the limit.
      ctx.raw = h['content-length'] === undefined ? streamWithin(ctx.req, maxBodyBytes) : ctx.req;
      return 'next';
    },
  };
}

async function read(ctx: RequestContext, limit: number): Promise<Outcome> {
  const read = await readBody(ctx.req, limit);
  if (!read.ok) return ctx.refuse(read.error);
  ctx.raw = ctx.requestBody = read.value;
  return 'next';
}

/** Read, and parsed for what it names; sent on as read whatever it holds (a body the provider judges). */
async function peeked(ctx: RequestContext, limit: number): Promise<Outcome> {
  const got = await read(ctx, limit);
  if (got === 'done') return got;
  const parsed = parseJson(ctx.requestBody!);
  if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)) {
    const json = (ctx.peeked = parsed.value as Record<string, unknown>);
    if (typeof json.model === 'string') ctx.model = json.model;
  }
  return 'next';
}

async function modelBody(ctx: RequestContext, limit: number, endpoint: ModelEndpoint, plan: Plan, make: BodyMaker): Promise<Outcome> {
  if (plan.passthrough) return peeked(ctx, limit);
  const got = await read(ctx, limit);
  if (got === 'done') return got;
  let parsed = parseJson(ctx.requestBody!);
  if (!parsed.ok) return ctx.refuse(parsed.error);
  const made = make(ctx, parsed.value);
  if (made !== null) {
    if (!made.ok) return ctx.refuse(made.error);
    parsed = made;
    ctx.raw = Buffer.from(JSON.stringify(made.value));
  }
  const problem = validateBody(endpoint, parsed.value) ?? strictCheck(plan, ctx.gateway!.strict, parsed.value);
  if (problem !== null) return ctx.refuse(problem);
  const body = (ctx.body = parsed.value as Record<string, unknown>);
  if (typeof body.model === 'string') ctx.model = body.model;
  return 'next';
}

/** Provider-specific fields such as `thinking` need strict compatibility turned off (spec: Chat completions). */
function strictCheck(plan: Plan, headerStrict: boolean | undefined, body: unknown): GatewayError | null {
  const strict = plan.strict ?? headerStrict ?? true;
  if (strict && (body as Record<string, unknown>).thinking !== undefined) {
    return invalid('thinking: requires strict_compat_compliance false (x-gateway-strict-compat-compliance: false)', 'thinking');
  }
  return null;
}
