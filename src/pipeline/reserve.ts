/**
 * Reserve: once the body is known, the budgets the request falls under
 * reserve the estimated usage of its dearest target (the model each would
 * send, after its param edits, at that model's price); nothing is sent when
 * one is exhausted (412), or when a cost budget applies and a target's model
 * has no known price (400).
 */
import type { CredentialSource } from '../routing/credentials.js';
import { sentTargets } from '../routing/sent-targets.js';
import type { Result } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import type { AnswerUsage, RequestLimits } from './limits.js';

export function reserve(limits: RequestLimits, credentials: CredentialSource): Stage {
  return {
    name: 'reserve',
    run(ctx) {
      const h = ctx.req.headers;
      const from = { workspaceId: ctx.key.workspaceId, provider: single(h['x-gateway-provider']), virtualKey: single(h['x-gateway-virtual-key']) };
      const reserved = limits.reserve(ctx.admission!, () => sentTargets(ctx.plan!, ctx.body ?? ctx.peeked, from, credentials));
      return reserved instanceof Promise ? reserved.then((u) => held(ctx, u)) : held(ctx, reserved);
    },
  };
}

function held(ctx: RequestContext, u: Result<AnswerUsage>): Outcome {
  if (!u.ok) return ctx.refuse(u.error);
  ctx.usage = u.value;
  return 'next';
}
