/**
 * A step of the before-hooks stage, ahead of the guardrails: the request's
 * hooks made whole — the workspace's default guardrails added, the saved
 * guardrails its config names resolved (guardrails/saved.ts). The plan is
 * copied with them only when there is something to add; a config naming a
 * guardrail that cannot run is refused here.
 */
import type { Hooks } from '../guardrails/hooks.js';
import type { SavedGuardrails } from '../guardrails/saved.js';
import type { Result } from '../shared/errors.js';
import type { Outcome, RequestContext, Stage } from './context.js';

export function savedGuardrails(saved: SavedGuardrails): Stage {
  return {
    name: 'saved-guardrails',
    run(ctx) {
      // The steps after this one judge only model endpoints' JSON bodies.
      if (ctx.body === null || ctx.endpoint === 'proxy') return 'next';
      const r = saved.resolve(ctx.key.workspaceId, ctx.plan!.hooks);
      return r instanceof Promise ? r.then((v) => resolved(ctx, v)) : resolved(ctx, r);
    },
  };
}

function resolved(ctx: RequestContext, r: Result<Hooks>): Outcome {
  if (!r.ok) return ctx.refuse(r.error);
  if (r.value !== ctx.plan!.hooks) ctx.plan = { ...ctx.plan!, hooks: r.value };
  return 'next';
}
