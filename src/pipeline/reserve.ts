/**
 * Reserve: once the body is known, the budgets the request falls under
 * reserve its estimated usage; nothing is sent when one is exhausted (412).
 */
import type { Result } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import type { AnswerUsage, RequestLimits } from './limits.js';

export function reserve(limits: RequestLimits): Stage {
  return {
    name: 'reserve',
    run(ctx) {
      const reserved = limits.reserve(ctx.admission!, ctx.body, single(ctx.req.headers['x-gateway-provider']));
      return reserved instanceof Promise ? reserved.then((u) => held(ctx, u)) : held(ctx, reserved);
    },
  };
}

function held(ctx: RequestContext, u: Result<AnswerUsage>): Outcome {
  if (!u.ok) return ctx.refuse(u.error);
  ctx.usage = u.value;
  return 'next';
}
