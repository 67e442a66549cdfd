/**
 * Cache: the config's `cache` asked for this request's answer (cache/): a
 * hit is written here and never reaches the router; otherwise the status
 * (MISS, REFRESH, DISABLED) goes on, with the ticket whose keeper stores the
 * answer as it streams to the client.
 */
import type { AnswerCache, CacheTicket } from '../cache/answer-cache.js';
import type { Result } from '../shared/errors.js';
import type { Outcome, RequestContext, Stage } from './context.js';

export function cache(answers: AnswerCache): Stage {
  return {
    name: 'cache',
    run(ctx) {
      const r = ctx.req;
      const opened = answers.open(ctx.plan!, { workspaceId: ctx.key.workspaceId, method: r.method!, path: ctx.path, headers: r.headers, body: ctx.body });
      return opened instanceof Promise ? opened.then((t) => served(ctx, t)) : served(ctx, opened);
    },
  };
}

function served(ctx: RequestContext, t: Result<CacheTicket>): Outcome {
  if (!t.ok) return ctx.refuse(t.error);
  const ticket = (ctx.cache = t.value);
  ctx.cacheStatus = ticket.status;
  const hit = ticket.hit;
  if (hit === null) return 'next';
  ctx.served = { provider: hit.provider, path: hit.path };
  ticket.replay(ctx.res, ctx.gatewayHeaders({}));
  ctx.status = hit.status;
  return 'done';
}
