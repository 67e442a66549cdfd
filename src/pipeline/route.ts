/**
 * Route: the plan walked by the router (strategies, retries, fallbacks,
 * circuits, timeouts) to a provider's answer, which leaves this stage in
 * OpenAI's shape: passed through as it is for the OpenAI-compatible family,
 * translated for providers with their own wire format (streams event by
 * event; whole answers and errors read and rewritten, errors in the
 * contract's envelope with the provider's status).
 */
import type { Router, RouteRequest } from '../routing/router.js';
import type { Answer } from '../providers/contract.js';
import { single } from '../shared/headers.js';
import { Cancel } from '../upstream/cancel.js';
import { AnswerTooLarge } from '../upstream/answer.js';
import type { UpstreamResponse } from '../upstream/client.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import { stripsAddedUsage } from './usage-strip.js';

export function route(router: Router): Stage {
  return {
    name: 'route',
    async run(ctx) {
      // Aborted when the client goes away before the answer is out: the provider call stops too.
      const cancel = new Cancel();
      const res = ctx.res;
      res.on('close', () => {
        if (!res.writableFinished) cancel.abort();
      });
      const result = (ctx.result = await router.route(ctx.plan!, routeRequest(ctx, cancel)));
      ctx.status = result.status;
      const upstream = result.response;
      if (upstream === null) {
        void ctx.usage!.release();
        if (result.status !== 499) return ctx.refuse(result.error!);
        ctx.error = result.error; // the client is gone; nobody to answer
        return 'done';
      }
      ctx.keeper = ctx.cache!.keeper(result);
      if (result.answer !== undefined) return translated(ctx, result.answer, upstream);
      // A small JSON answer came whole (upstream/answer.ts): it goes on as text, like a translated one.
      ctx.answer = {
        status: upstream.statusCode,
        headers: upstream.headers,
        body: upstream.whole !== null ? upstream.whole.toString('utf8') : upstream.body,
        addedUsage: upstream.whole === null && stripsAddedUsage(result.addedUsage, upstream.statusCode, upstream.headers),
      };
      return 'next';
    },
  };
}

function routeRequest(ctx: RequestContext, signal: Cancel): RouteRequest {
  const h = ctx.req.headers;
  const gh = ctx.gateway!;
  return {
    endpoint: ctx.endpoint,
    method: ctx.req.method!,
    path: ctx.path,
    pathname: ctx.pathname,
    body: ctx.body,
    sentModel: ctx.body === null ? ctx.model : undefined,
    raw: ctx.raw,
    headers: h,
    metadata: gh.metadata,
    workspaceId: ctx.key.workspaceId,
    provider: single(h['x-gateway-provider']),
    customHost: single(h['x-gateway-custom-host']),
    authorization: single(h.authorization),
    virtualKey: single(h['x-gateway-virtual-key']),
    forwardHeaders: gh.forwardHeaders,
    timeoutMs: gh.timeoutMs,
    signal,
    observer: ctx.span,
  };
}

/** A provider with its own wire format: its answer made OpenAI's by the translator's reader. */
async function translated(ctx: RequestContext, tr: Answer, upstream: UpstreamResponse): Promise<Outcome> {
  const ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
  if (ok && tr.streamed) {
    const events = tr.stream();
    upstream.body.once('error', (e) => events.destroy(e));
    events.once('close', () => {
      if (!upstream.body.readableEnded) upstream.body.destroy();
    });
    upstream.body.pipe(events);
    ctx.answer = { status: 200, headers: tr.headers, body: events, addedUsage: tr.addedUsage };
    return 'next';
  }
  let raw: Buffer;
  try {
    raw = upstream.whole ?? (await upstream.body.bytes());
  } catch (e) {
    // More than the gateway holds of an answer: the contract's 502, nothing was written yet.
    if (e instanceof AnswerTooLarge) {
      void ctx.usage!.release();
      return ctx.refuse(e);
    }
    ctx.res.destroy();
    ctx.cut = true;
    return 'done';
  }
  const text = ok && !tr.streamed ? tr.response(raw, upstream.headers) : null;
  if (text === null || !text.ok) {
    void ctx.usage!.release();
    return ctx.refuse(text === null ? tr.error(upstream.statusCode, raw, upstream.headers) : text.error);
  }
  ctx.answer = { status: 200, headers: tr.headers, body: text.value, addedUsage: false };
  return 'next';
}
