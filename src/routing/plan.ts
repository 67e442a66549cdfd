/**
 * A routing plan: the config tree with every inherited setting resolved once,
 * so the hot path walks ready-made nodes instead of merging objects on each
 * request. Plans are cached per validated Config object.
 *
 * Inheritance (as in Portkey): a target takes its parent's retry,
 * request_timeout, cb_config, forward_headers and param edits unless it sets
 * its own; override_params and default_params merge key by key (the nearer
 * node wins) and drop_params accumulate.
 */
import { createHash } from 'node:crypto';
import type {
  CacheConfig,
  CircuitBreakerConfig,
  Config,
  ConfigNode,
  ConditionQuery,
  RetryConfig,
  StrategyMode,
} from '../config/types.js';
import { compileHooks, NO_HOOKS, type Hooks } from '../guardrails/hooks.js';
import { MAX_PATTERN_WEIGHT } from '../shared/linear-regex.js';

export interface ParamEdits {
  override_params?: Record<string, unknown>;
  default_params?: Record<string, unknown>;
  drop_params?: string[];
}

export interface PlanLeaf {
  kind: 'leaf';
  /** Contract's x-gateway-last-used-option-index, e.g. `config.targets[1]`. */
  path: string;
  node: ConfigNode;
  weight: number;
  retry: RetryConfig | undefined;
  timeoutMs: number | undefined;
  edits: ParamEdits | null;
  forwardHeaders: readonly string[];
  cb: CircuitBreakerConfig | undefined;
  /** Identity of this target for circuit state shared across requests and processes. */
  circuitKey: string;
}

export interface PlanGroup {
  kind: 'group';
  path: string;
  mode: StrategyMode;
  weight: number;
  targets: PlanNode[];
  byName: ReadonlyMap<string, PlanNode>;
  conditions: readonly { query: ConditionQuery; then: string }[];
  defaultName: string | undefined;
  /** Fallback moves on only for these statuses; undefined: any non-2xx. */
  onStatusCodes: readonly number[] | undefined;
  /** Some target below has a circuit breaker: only then is circuit state read. */
  guarded: boolean;
}

export type PlanNode = PlanLeaf | PlanGroup;

export interface Plan {
  root: PlanNode;
  /** Config-level settings that are about the whole request, not a target. */
  passthrough: boolean;
  strict: boolean | undefined;
  /** The config's hooks and guardrails, ready to run: before the request and after its answer. */
  hooks: Hooks;
  /** The config's cache: it applies to the whole request, before any target is chosen. */
  cache: CacheConfig | undefined;
  /** The config's identity (saved version id, or a hash of the inline JSON); cache keys include it. */
  identity: string;
  /** The saved config's id; null for an inline config or none. */
  configId: string | null;
  /** The prompt the config names (`prompt_id`): the request's messages are rendered from it (pipeline/prompt.ts). */
  promptId?: string;
}

interface Inherited {
  retry?: RetryConfig;
  timeoutMs?: number;
  cb?: CircuitBreakerConfig;
  forwardHeaders: readonly string[];
  override?: Record<string, unknown>;
  defaults?: Record<string, unknown>;
  drops?: string[];
}

const plans = new WeakMap<Config, Plan>();

/** No config: one target whose provider and credentials come from request headers. */
export const HEADER_PLAN: Plan = buildPlan({} as Config, 'headers');

export function planFor(config: Config, identity?: string): Plan {
  let plan = plans.get(config);
  if (plan === undefined) {
    plan = buildPlan(config, identity ?? createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 16));
    plans.set(config, plan);
  }
  return plan;
}

function buildPlan(config: Config, identity: string): Plan {
  return {
    root: buildNode(config, 'config', { forwardHeaders: [] }, identity),
    passthrough: config.passthrough === true,
    strict: config.strict_compat_compliance,
    hooks: hooksOf(config),
    cache: config.cache,
    identity,
    configId: null,
    promptId: config.prompt_id,
  };
}

function hooksOf(config: Config): Hooks {
  if (config.before_request_hooks === undefined && config.after_request_hooks === undefined && config.input_guardrails === undefined && config.output_guardrails === undefined) {
    return NO_HOOKS;
  }
  const hooks = compileHooks(config, { left: MAX_PATTERN_WEIGHT });
  // parseConfig compiled the same hooks: a Config always has ready ones.
  if (!hooks.ok) throw new Error(`a validated config's hooks do not compile: ${hooks.problem.message}`);
  return hooks.value;
}

function buildNode(node: ConfigNode, path: string, parent: Inherited, identity: string): PlanNode {
  const inh: Inherited = {
    retry: node.retry ?? parent.retry,
    timeoutMs: node.request_timeout ?? parent.timeoutMs,
    cb: node.cb_config ?? parent.cb,
    forwardHeaders: node.forward_headers?.map((h) => h.toLowerCase()) ?? parent.forwardHeaders,
    override: merge(parent.override, node.override_params),
    defaults: merge(parent.defaults, node.default_params),
    drops: node.drop_params === undefined ? parent.drops : [...(parent.drops ?? []), ...node.drop_params],
  };
  const weight = node.weight ?? 1;
  if (node.strategy !== undefined && node.targets !== undefined) {
    const targets = node.targets.map((t, i) => buildNode(t, `${path}.targets[${i}]`, inh, identity));
    const byName = new Map<string, PlanNode>();
    node.targets.forEach((t, i) => {
      if (t.name !== undefined) byName.set(t.name, targets[i]!);
    });
    return {
      kind: 'group',
      path,
      mode: node.strategy.mode,
      weight,
      targets,
      byName,
      conditions: node.strategy.conditions ?? [],
      defaultName: node.strategy.default,
      onStatusCodes: node.strategy.on_status_codes ?? node.on_status_codes,
      guarded: targets.some((t) => (t.kind === 'leaf' ? t.cb !== undefined : t.guarded)),
    };
  }
  const edits: ParamEdits | null =
    inh.override === undefined && inh.defaults === undefined && inh.drops === undefined
      ? null
      : { override_params: inh.override, default_params: inh.defaults, drop_params: inh.drops };
  return {
    kind: 'leaf',
    path,
    node,
    weight,
    retry: inh.retry,
    timeoutMs: inh.timeoutMs,
    edits,
    forwardHeaders: inh.forwardHeaders,
    cb: inh.cb,
    circuitKey: `${identity}:${path}`,
  };
}

function merge(
  parent: Record<string, unknown> | undefined,
  own: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (own === undefined) return parent;
  return parent === undefined ? own : { ...parent, ...own };
}
