/**
 * Cache: the config's `cache` asked for this request's answer (cache/): a
 * hit is answered here and never reaches the router; otherwise the status
 * (MISS, REFRESH, DISABLED) goes on, with the ticket whose keeper stores the
 * answer as it streams to the client. A hit is written as stored, unless the
 * config has after hooks (or a before hook failed without deny): then it
 * goes through `answered`, the stages that judge and write an answer, as a
 * provider's would, charging nothing.
 */
import { Readable } from 'node:stream';
import type { AnswerCache, CacheTicket } from '../cache/answer-cache.js';
import type { CachedAnswer } from '../cache/store.js';
import { isEventStreamType } from '../shared/content-type.js';
import type { Result } from '../shared/errors.js';
import { runStages, type Answer, type Outcome, type RequestContext, type Stage } from './context.js';
import { UNCHARGED } from './limits.js';

export function cache(answers: AnswerCache, answered: readonly Stage[]): Stage {
  return {
    name: 'cache',
    run(ctx) {
      const r = ctx.req;
      const opened = answers.open(ctx.plan!, { workspaceId: ctx.key.workspaceId, method: r.method!, path: ctx.path, headers: r.headers, body: ctx.body });
      return opened instanceof Promise ? opened.then((t) => served(ctx, t, answered)) : served(ctx, opened, answered);
    },
  };
}

function served(ctx: RequestContext, t: Result<CacheTicket>, answered: readonly Stage[]): Outcome | Promise<Outcome> {
  if (!t.ok) return ctx.refuse(t.error);
  const ticket = (ctx.cache = t.value);
  ctx.cacheStatus = ticket.status;
  const hit = ticket.hit;
  if (hit === null) return 'next';
  ctx.served = { provider: hit.provider, path: hit.path };
  ctx.status = hit.status;
  if (ctx.plan!.hooks.after.length > 0 || ctx.hooks?.failed === true) {
    ctx.answer = hitAnswer(hit);
    ctx.keeper = ticket.keeper(ctx.served);
    ctx.usage = UNCHARGED;
    return runStages(answered, ctx);
  }
  ticket.replay(ctx.res, ctx.gatewayHeaders({}));
  return 'done';
}

/** A stored answer as the after-hooks stage takes a provider's: a stream's bytes as a stream, else the text. */
function hitAnswer(hit: CachedAnswer): Answer {
  const stream = isEventStreamType(hit.headers['content-type']);
  return { status: hit.status, headers: hit.headers, body: stream ? Readable.from([hit.body]) : hit.body.toString('utf8'), addedUsage: false };
}
