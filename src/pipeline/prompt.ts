/**
 * The prompt stage, after plan: a request that runs a prompt — POST
 * /v1/prompts/:id/completions, or a chat request whose config names
 * `prompt_id` — gets the prompt (saved-prompts.ts), is held to its `access`
 * (`run`; a config's prompt also needs the key's prompts.run scope, which a
 * run's route checked) and routed by it:
 *
 * - a run goes where the prompt says (its saved config, else its
 *   credential), unless the key enforces its own config
 *   (defaults.allow_config_override false); a prompt that says nothing
 *   leaves the plan as headers and defaults made it;
 * - a config's prompt routes the request only where the config names no
 *   target of its own (no provider, virtual key or targets): its
 *   credential's, or its config's, targets then take the config's place,
 *   the config's cache, hooks and other settings staying.
 *
 * The body stage then renders the prompt into the body (renderPrompt), so
 * that validation, guardrails, cache, limits, routing and logs all see
 * the request the prompt made.
 */
import { requireScope } from '../http/auth.js';
import { promptDenied } from '../prompts/access.js';
import { renderedBody } from '../prompts/body.js';
import type { Plan } from '../routing/plan.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { Roles } from '../store/roles.js';
import type { BodyMaker } from './body.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import type { PlanLookup, SavedConfigs } from './saved-configs.js';
import type { ReadyPrompt, SavedPrompts } from './saved-prompts.js';

export function prompt(prompts: SavedPrompts, configs: SavedConfigs): Stage {
  return {
    name: 'prompt',
    run(ctx) {
      const run = ctx.promptRef;
      const ref = run ?? ctx.plan!.promptId;
      if (ref === undefined) return 'next';
      if (run === null) {
        if (ctx.endpoint !== 'chat') return ctx.refuse(invalid(`prompt_id: a config's prompt makes chat requests: send it to /v1/chat/completions, not ${ctx.pathname}`, 'prompt_id'));
        const denied = requireScope(ctx.key, 'prompts.run');
        if (denied !== null) return ctx.refuse(denied);
      }
      if (ctx.plan!.passthrough) return ctx.refuse(invalid('passthrough: a prompt is rendered into the body, which pass-through mode sends as it came', 'passthrough'));
      const found = prompts.find(ctx.key.workspaceId, ref);
      const roles = prompts.rolesOf(ctx.key);
      if (!(found instanceof Promise) && !(roles instanceof Promise)) return withPrompt(ctx, ref, found, roles, configs);
      return Promise.all([found, roles]).then(([f, r]) => withPrompt(ctx, ref, f, r, configs));
    },
  };
}

function withPrompt(ctx: RequestContext, ref: string, found: Result<ReadyPrompt | null>, roles: Roles, configs: SavedConfigs): Outcome | Promise<Outcome> {
  if (!found.ok) return ctx.refuse(found.error);
  const ready = found.value;
  if (ready === null) {
    return ctx.refuse(
      ctx.promptRef === null
        ? invalid(`prompt_id: prompt '${ref}' not found`, 'prompt_id', 'unknown_prompt')
        : new GatewayError(404, `prompt '${ref}' not found`, { code: 'not_found' }),
    );
  }
  const denied = promptDenied(ready.loaded.prompt, 'run', roles);
  if (denied !== null) return ctx.refuse(denied);
  ctx.prompt = ready.loaded;
  const routing = promptRouting(ctx, ready, configs);
  if (routing === null) return 'next';
  return routing instanceof Promise ? routing.then((r) => routed(ctx, r)) : routed(ctx, routing);
}

/** The plan the prompt routes by here, or null where the request's own plan stands. */
function promptRouting(ctx: RequestContext, ready: ReadyPrompt, configs: SavedConfigs): PlanLookup | null {
  const p = ready.loaded.prompt;
  const own = p.configId === null ? ready.credentialPlan : configs.byRef(p.workspaceId, p.configId);
  if (own === null) return null;
  if (ctx.promptRef !== null) return ctx.key.defaults?.allow_config_override === false ? null : own;
  return routesNowhere(ctx.plan!) ? own : null;
}

function routed(ctx: RequestContext, own: Result<Plan>): Outcome {
  if (!own.ok) return ctx.refuse(own.error);
  if (ctx.promptRef !== null) {
    ctx.plan = own.value;
    ctx.configId = own.value.configId;
  } else ctx.plan = { ...ctx.plan!, root: own.value.root };
  return 'next';
}

/** A config that names no target: no provider, virtual key or strategy at its root. */
function routesNowhere(plan: Plan): boolean {
  const root = plan.root;
  return root.kind === 'leaf' && root.node.provider === undefined && root.node.virtual_key === undefined;
}

/** The body stage's step for a prompt request: the call (variables, hyperparameters) made the chat body the prompt renders. */
export const renderPrompt: BodyMaker = (ctx, parsed) => {
  if (ctx.prompt === null) return null;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, error: invalid('request body must be a JSON object') };
  return renderedBody(ctx.prompt, parsed as Record<string, unknown>);
};
