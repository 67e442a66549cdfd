/**
 * Plan: the request's config, made a routing plan — x-gateway-config (inline
 * JSON, or a saved config's id or slug; refused when the key enforces its
 * own), else the key's pinned config
 * (`defaults.config_id`), else, when the request names no provider, its
 * workspace's default config; else the headers alone say where it goes.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { parseConfigHeader } from '../config/schema.js';
import type { Config } from '../config/types.js';
import { planFor, type Plan } from '../routing/plan.js';
import { GatewayError, type Result } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import { HEADERS_ONLY, type PlanLookup, type SavedConfigs } from './saved-configs.js';

export function plan(saved: SavedConfigs): Stage {
  return {
    name: 'plan',
    run(ctx) {
      const found = lookup(saved, ctx.req.headers, ctx.key);
      return found instanceof Promise ? found.then((p) => planned(ctx, p)) : planned(ctx, found);
    },
  };
}

function planned(ctx: RequestContext, p: Result<Plan>): Outcome {
  if (!p.ok) return ctx.refuse(p.error);
  ctx.plan = p.value;
  ctx.configId = p.value.configId;
  return 'next';
}

/** A key whose owner set `defaults.allow_config_override: false` routes by its own config only: a caller's is refused, not silently ignored. */
const ENFORCED: Result<Plan> = {
  ok: false,
  error: new GatewayError(403, "x-gateway-config: this key's config is enforced (defaults.allow_config_override is false)", {
    code: 'config_override_not_allowed',
    param: 'x-gateway-config',
  }),
};

function lookup(saved: SavedConfigs, headers: IncomingHttpHeaders, key: ApiKeyRecord): PlanLookup {
  const header = single(headers['x-gateway-config']);
  if (header !== undefined && header !== '') {
    if (key.defaults?.allow_config_override === false) return ENFORCED;
    if (header.trimStart().startsWith('{')) {
      const parsed = parseConfigHeader(header);
      return parsed.ok ? { ok: true, value: planFor(parsed.value as Config) } : parsed;
    }
    return saved.byRef(key.workspaceId, header);
  }
  const pinned = key.defaults?.config_id;
  if (typeof pinned === 'string' && pinned !== '') return saved.byRef(key.workspaceId, pinned);
  if (headers['x-gateway-provider'] === undefined && headers['x-gateway-virtual-key'] === undefined) return saved.defaultOf(key.workspaceId);
  return HEADERS_ONLY;
}
