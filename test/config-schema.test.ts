import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TARGETS, parseConfig, parseConfigHeader } from '../src/config/schema.js';
import type { Config } from '../src/config/types.js';

function accepts(raw: unknown): Config {
  const r = parseConfig(raw);
  if (!r.ok) assert.fail(`expected valid config, got: ${r.error.message}`);
  return r.value;
}

function rejects(raw: unknown, param: string | null, message?: RegExp): void {
  const r = parseConfig(raw);
  if (r.ok) assert.fail(`expected rejection at ${String(param)}: ${JSON.stringify(raw)}`);
  assert.equal(r.error.status, 400);
  assert.equal(r.error.param, param);
  if (message) assert.match(r.error.message, message);
}

const lb = (...targets: unknown[]) => ({ strategy: { mode: 'loadbalance' }, targets });
const openai = { provider: 'openai', api_key: 'sk-x' };

describe('key groups', () => {
  it('rejects a config with none of the key groups and lists them', () => {
    rejects({}, null, /provider\+api_key, provider\+custom_host, virtual_key, strategy\+targets, cache, retry, prompt_id/);
    rejects({ name: 'n' }, null, /cloud3_endpoint_name\+cloud3_deployment_type, .*input_guardrails, output_guardrails, passthrough$/);
    rejects({ provider: 'openai' }, null, /key groups/);
    rejects({ provider: 'openai', cloud2_region: 'eu' }, null);
  });

  it('a provider slug alone names stored credentials', () => {
    accepts({ provider: '@team-openai' });
    accepts({ provider: '@team-openai', override_params: { model: 'gpt-4o' } });
    accepts(lb({ provider: '@a' }, { provider: '@b' }));
  });

  it('accepts each key group alone', () => {
    const groups: unknown[] = [
      openai,
      { provider: 'ollama', custom_host: 'http://127.0.0.1:11434/v1' },
      { virtual_key: 'vk' },
      lb(openai),
      { cache: { mode: 'simple' } },
      { retry: { attempts: 1 } },
      { prompt_id: 'p' },
      { forward_headers: ['x-a'] },
      { request_timeout: 1000 },
      { provider: 'cloud1', cloud1_access_key_id: 'a', cloud1_secret_access_key: 's' },
      { provider: 'cloud2', cloud2_region: 'r', cloud2_service_account_json: { type: 'service_account' } },
      { provider: 'cloud2', cloud2_region: 'r', cloud2_project_id: 'p' },
      { provider: 'cloud3', cloud3_deployment_name: 'd', cloud3_deployment_type: 'managed', cloud3_region: 'r', cloud3_api_version: 'v' },
      { provider: 'cloud3', cloud3_endpoint_name: 'e', cloud3_deployment_type: 'serverless' },
      { after_request_hooks: [] },
      { before_request_hooks: [] },
      { input_guardrails: [] },
      { output_guardrails: [] },
      { passthrough: true },
    ];
    for (const g of groups) accepts(g);
  });

  it('rejects a non-object config', () => {
    for (const raw of ['x', 1, null, [], undefined]) rejects(raw, null);
  });
});

describe('unknown keys', () => {
  it('are rejected everywhere with the key in the path', () => {
    rejects({ ...openai, bogus: 1 }, 'bogus', /^config\.bogus: unknown key$/);
    rejects({ strategy: { mode: 'fallback', bogus: 1 }, targets: [openai] }, 'strategy.bogus');
    rejects({ cache: { mode: 'simple', bogus: 1 } }, 'cache.bogus');
    rejects({ retry: { attempts: 1, bogus: 1 } }, 'retry.bogus');
    rejects({ ...openai, cb_config: { failure_threshold: 1, cooldown_interval: 30000, bogus: 1 } }, 'cb_config.bogus');
    rejects({ before_request_hooks: [{ id: 'h', bogus: 1 }] }, 'before_request_hooks[0].bogus');
    rejects({ after_request_hooks: [{ id: 'h', checks: [{ id: 'c', parameters: {}, bogus: 1 }] }] }, 'after_request_hooks[0].checks[0].bogus');
    rejects({ before_request_hooks: [{ id: 'h', on_fail: { feedback: { value: 1, bogus: 1 } } }] }, 'before_request_hooks[0].on_fail.feedback.bogus');
    rejects({ ...openai, deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', bogus: 1 }] }, 'deployments[0].bogus');
  });

  it('names the nested target path', () => {
    const nested = lb({ strategy: { mode: 'fallback' }, targets: [openai, { ...openai, bogus: 1 }] });
    rejects(nested, 'targets[0].targets[1].bogus', /^config\.targets\[0\]\.targets\[1\]\.bogus: unknown key$/);
  });
});

describe('strategy and targets', () => {
  it('requires a known mode', () => {
    rejects({ strategy: {}, targets: [openai] }, 'strategy.mode', /is required/);
    rejects({ strategy: { mode: 'random' }, targets: [openai] }, 'strategy.mode');
    for (const mode of ['single', 'loadbalance', 'fallback']) accepts({ strategy: { mode }, targets: [openai] });
  });

  it('requires targets with strategy and strategy with targets', () => {
    rejects({ strategy: { mode: 'fallback' } }, 'targets', /required/);
    rejects({ targets: [openai] }, 'strategy', /required/);
    rejects({ strategy: { mode: 'fallback' }, targets: [] }, 'targets', /non-empty/);
    rejects({ strategy: { mode: 'fallback' }, targets: {} }, 'targets');
  });

  it('validates targets recursively', () => {
    rejects(lb(openai, { ...openai, retry: { attempts: 6 } }), 'targets[1].retry.attempts', /^config\.targets\[1\]\.retry\.attempts: must be an integer between 0 and 5$/);
    rejects(lb(lb(lb({ ...openai, weight: 'x' }))), 'targets[0].targets[0].targets[0].weight');
    rejects(lb(lb(openai, { strategy: { mode: 'single' } })), 'targets[0].targets[1].targets');
    accepts(lb(lb(lb(openai))));
  });

  it('requires leaf targets to name where to send', () => {
    rejects(lb(openai, { cache: { mode: 'simple' } }), 'targets[1]', /provider, virtual_key or passthrough/);
    rejects(lb(lb({ passthrough: false })), 'targets[0].targets[0]');
    accepts(lb({ provider: 'openai' }, { virtual_key: 'vk' }, { passthrough: true }));
  });

  it('lets the root omit a provider and a target omit api_key', () => {
    accepts({ retry: { attempts: 2 }, cache: { mode: 'simple' } });
    accepts(lb({ provider: 'openai' }, { provider: 'ollama', custom_host: 'http://localhost:11434' }));
  });

  it('checks weight and on_status_codes', () => {
    rejects(lb({ ...openai, weight: -1 }), 'targets[0].weight');
    accepts(lb({ ...openai, weight: 0 }, { ...openai, weight: 0.5 }));
    rejects(lb({ ...openai, on_status_codes: [99] }), 'targets[0].on_status_codes[0]');
    rejects(lb({ ...openai, on_status_codes: [429, 600] }), 'targets[0].on_status_codes[1]');
    rejects(lb({ ...openai, on_status_codes: [429.5] }), 'targets[0].on_status_codes[0]');
    rejects(lb({ ...openai, on_status_codes: ['429'] }), 'targets[0].on_status_codes[0]');
    rejects({ strategy: { mode: 'fallback', on_status_codes: [600] }, targets: [openai] }, 'strategy.on_status_codes[0]');
    accepts({ strategy: { mode: 'fallback', on_status_codes: [100, 429, 599] }, targets: [{ ...openai, on_status_codes: [500] }] });
  });
});

describe('conditional strategy', () => {
  const targets = [
    { name: 'fast', ...openai },
    { name: 'smart', provider: 'anthropic' },
  ];
  const conditional = (strategy: Record<string, unknown>) => ({ strategy: { mode: 'conditional', ...strategy }, targets });

  it('accepts conditions and default naming targets', () => {
    const c = accepts(conditional({ conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'smart' }], default: 'fast' }));
    assert.equal(c.strategy?.conditions?.[0]?.then, 'smart');
  });

  it('requires conditions and default', () => {
    rejects(conditional({ conditions: [{ query: {}, then: 'smart' }] }), 'strategy.default', /required when mode is conditional/);
    rejects(conditional({ default: 'fast' }), 'strategy.conditions', /required/);
    rejects(conditional({ conditions: [], default: 'fast' }), 'strategy.conditions', /non-empty/);
    rejects(conditional({ conditions: [{ then: 'smart' }], default: 'fast' }), 'strategy.conditions[0].query');
    rejects(conditional({ conditions: [{ query: {} }], default: 'fast' }), 'strategy.conditions[0].then');
  });

  it('requires then and default to name a target of the node', () => {
    rejects(conditional({ conditions: [{ query: {}, then: 'fast' }, { query: {}, then: 'missing' }], default: 'fast' }), 'strategy.conditions[1].then', /target names: fast, smart/);
    rejects(conditional({ conditions: [{ query: {}, then: 'fast' }], default: 'missing' }), 'strategy.default');
    const nested = lb({ strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'fast' }], default: 'x' }, targets: [{ name: 'y', ...openai }] });
    rejects(nested, 'targets[0].strategy.conditions[0].then');
  });

  it('rejects conditions and default for other modes', () => {
    rejects({ strategy: { mode: 'fallback', conditions: [{ query: {}, then: 'fast' }] }, targets }, 'strategy.conditions', /only allowed when mode is conditional/);
    rejects({ strategy: { mode: 'loadbalance', default: 'fast' }, targets }, 'strategy.default');
  });
});

describe('retry', () => {
  it('requires attempts as an integer 0..5', () => {
    rejects({ retry: {} }, 'retry.attempts', /is required/);
    rejects({ retry: { attempts: 6 } }, 'retry.attempts');
    rejects({ retry: { attempts: -1 } }, 'retry.attempts');
    rejects({ retry: { attempts: 1.5 } }, 'retry.attempts');
    rejects({ retry: { attempts: '2' } }, 'retry.attempts');
    accepts({ retry: { attempts: 0 } });
    accepts({ retry: { attempts: 5 } });
  });

  it('accepts numeric-string status codes as numbers', () => {
    const c = accepts({ retry: { attempts: 2, on_status_codes: ['429', 503] } });
    assert.deepEqual(c.retry?.on_status_codes, [429, 503]);
    rejects({ retry: { attempts: 2, on_status_codes: ['abc'] } }, 'retry.on_status_codes[0]');
    rejects({ retry: { attempts: 2, on_status_codes: ['700'] } }, 'retry.on_status_codes[0]');
  });

  it('types use_retry_after_headers', () => {
    rejects({ retry: { attempts: 2, use_retry_after_headers: 'yes' } }, 'retry.use_retry_after_headers');
    accepts({ retry: { attempts: 2, use_retry_after_headers: true } });
  });
});

describe('cb_config', () => {
  const cb = (cb_config: unknown) => ({ ...openai, cb_config });

  it('enforces the minimums', () => {
    rejects(cb({ failure_threshold: 1, cooldown_interval: 29999 }), 'cb_config.cooldown_interval', /at least 30000/);
    accepts(cb({ failure_threshold: 1, cooldown_interval: 30000 }));
    rejects(cb({ failure_threshold: 0, cooldown_interval: 30000 }), 'cb_config.failure_threshold');
    rejects(lb(cb({ failure_threshold: 0.5, cooldown_interval: 60000 })), 'targets[0].cb_config.failure_threshold');
  });

  it('requires both thresholds and checks status codes', () => {
    rejects(cb({ cooldown_interval: 30000 }), 'cb_config.failure_threshold', /is required/);
    rejects(cb({ failure_threshold: 3 }), 'cb_config.cooldown_interval', /is required/);
    rejects(cb({ failure_threshold: 3, cooldown_interval: 30000, failure_status_codes: [503, 1000] }), 'cb_config.failure_status_codes[1]');
    accepts(cb({ failure_threshold: 3, cooldown_interval: 30000, failure_status_codes: [500, 503] }));
  });
});

describe('cache, timeout and params', () => {
  it('checks cache', () => {
    rejects({ cache: {} }, 'cache.mode', /is required/);
    rejects({ cache: { mode: 'fuzzy' } }, 'cache.mode');
    rejects({ cache: { mode: 'simple', max_age: 0 } }, 'cache.max_age');
    rejects({ cache: { mode: 'simple', max_age: 1.5 } }, 'cache.max_age');
    accepts({ cache: { mode: 'semantic', max_age: 3600 } });
  });

  it('checks the semantic cache: threshold 0..1, an embedding target named like a target', () => {
    const semantic = (over: Record<string, unknown>) => ({ cache: { mode: 'semantic', ...over } });
    accepts(semantic({ similarity_threshold: 0 }));
    accepts(semantic({ similarity_threshold: 1 }));
    accepts(semantic({ similarity_threshold: 0.925 }));
    for (const bad of [-0.1, 1.01, '0.9', null]) {
      rejects(semantic({ similarity_threshold: bad }), 'cache.similarity_threshold', /^config\.cache\.similarity_threshold: must be a number between 0 and 1$/);
    }
    rejects({ ...lb(openai), cache: { mode: 'simple', similarity_threshold: 0.9 } }, 'cache.similarity_threshold', /only allowed when mode is semantic/);
    rejects({ cache: { mode: 'simple', embedding: { model: 'e' } } }, 'cache.embedding', /only allowed when mode is semantic/);
    accepts(semantic({ embedding: { model: 'text-embedding-3-large' } }));
    accepts(semantic({ embedding: { model: 'e', request_timeout: 500 } }));
    accepts(semantic({ embedding: { provider: 'openai', api_key: 'sk-x', model: 'text-embedding-3-small' } }));
    accepts(semantic({ embedding: { provider: 'ollama', custom_host: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text' } }));
    accepts(semantic({ embedding: { virtual_key: 'vk-embed' } }));
    accepts(semantic({ embedding: { provider: 'azure-openai', resource_name: 'r', deployment_id: 'embed', api_version: '2024-06-01', api_key: 'k' } }));
    rejects(semantic({ embedding: { model: '' } }), 'cache.embedding.model');
    rejects(semantic({ embedding: { provider: 'openai', custom_host: 'not a url' } }), 'cache.embedding.custom_host');
    rejects(semantic({ embedding: { provider: 'openai', bogus: 1 } }), 'cache.embedding.bogus', /unknown key/);
    rejects(semantic({ embedding: { provider: 'openai', strategy: { mode: 'single' } } }), 'cache.embedding.strategy', /unknown key/);
    rejects(semantic({ embedding: { provider: 'openai', request_timeout: 0 } }), 'cache.embedding.request_timeout');
    rejects(semantic({ embedding: { model: 'e', api_key: 'sk-x' } }), 'cache.embedding.api_key', /needs provider or virtual_key/);
    rejects(semantic({ embedding: { custom_host: 'http://127.0.0.1:1/v1' } }), 'cache.embedding.custom_host', /needs provider or virtual_key/);
    rejects(lb(openai, { ...openai, cache: { mode: 'semantic', similarity_threshold: 2 } }), 'targets[1].cache.similarity_threshold');
  });

  it('checks request_timeout', () => {
    rejects({ request_timeout: 0 }, 'request_timeout');
    rejects({ request_timeout: 10.5 }, 'request_timeout');
    rejects({ request_timeout: '1000' }, 'request_timeout');
    accepts({ request_timeout: 1 });
  });

  it('checks override_params, default_params and drop_params', () => {
    rejects({ ...openai, override_params: [] }, 'override_params');
    rejects({ ...openai, default_params: 'x' }, 'default_params');
    accepts({ ...openai, override_params: { model: 'gpt-4o', temperature: 0 }, default_params: { max_tokens: 10 } });
    rejects({ ...openai, drop_params: [''] }, 'drop_params[0]');
    rejects({ ...openai, drop_params: ['a..b'] }, 'drop_params[0]');
    rejects({ ...openai, drop_params: ['a[x]'] }, 'drop_params[0]');
    rejects({ targets: [{ ...openai, drop_params: ['a['] }], strategy: { mode: 'fallback' } }, 'targets[0].drop_params[0]');
    rejects({ ...openai, drop_params: [1] }, 'drop_params[0]');
    accepts({ ...openai, drop_params: ['messages.0.name', 'a.b[2].c', 'user'] });
  });

  it('checks forward_headers and custom_host', () => {
    rejects({ forward_headers: ['bad header'] }, 'forward_headers[0]');
    rejects({ forward_headers: 'x-a' }, 'forward_headers');
    accepts({ forward_headers: ['x-custom-id', 'X-Trace'] });
    rejects({ provider: 'openai', custom_host: 'ftp://host/v1' }, 'custom_host');
    rejects({ provider: 'openai', custom_host: 'not a url' }, 'custom_host');
    accepts({ provider: 'openai', custom_host: 'https://models.internal:8443/v1' });
  });
});

describe('hooks', () => {
  const check = { id: 'default.regexMatch', parameters: { rule: 'x', not: false } };

  it('requires id and check fields', () => {
    rejects({ before_request_hooks: [{ type: 'guardrail' }] }, 'before_request_hooks[0].id', /is required/);
    rejects({ before_request_hooks: [{ id: 'h', checks: [{ id: 'c' }] }] }, 'before_request_hooks[0].checks[0].parameters');
    rejects({ before_request_hooks: [{ id: 'h', checks: [{ parameters: {} }] }] }, 'before_request_hooks[0].checks[0].id');
    accepts({ before_request_hooks: [{ id: 'h', type: 'guardrail', checks: [check] }] });
  });

  it('allows async only after the request and deny only before', () => {
    rejects({ before_request_hooks: [{ id: 'h', async: true }] }, 'before_request_hooks[0].async', /after_request_hooks/);
    accepts({ after_request_hooks: [{ id: 'h', async: true }] });
    rejects({ after_request_hooks: [{ id: 'h', on_fail: { deny: true } }] }, 'after_request_hooks[0].on_fail.deny', /before_request_hooks/);
    accepts({ before_request_hooks: [{ id: 'h', on_fail: { deny: true }, on_success: { deny: false } }] });
  });

  it('checks feedback', () => {
    const hook = (feedback: unknown) => ({ after_request_hooks: [{ id: 'h', on_success: { feedback } }] });
    accepts(hook({ value: 1, weight: 0.5, metadata: { k: 'v' } }));
    rejects(hook({ value: 'good' }), 'after_request_hooks[0].on_success.feedback.value');
    rejects(hook({ metadata: 'x' }), 'after_request_hooks[0].on_success.feedback.metadata');
  });
});

describe('guardrails', () => {
  it('accepts ids and objects with check keys', () => {
    accepts({
      input_guardrails: ['gr-1', { id: 'gr-2', deny: true, async: false, 'default.regexMatch': { rule: '\\d+', not: true } }],
      output_guardrails: [{ 'default.wordCount': { minWords: 1 }, on_fail: { deny: true, feedback: { value: -1 } } }],
    });
  });

  it('rejects bad items', () => {
    rejects({ input_guardrails: [42] }, 'input_guardrails[0]');
    rejects({ input_guardrails: [{ 'default.contains': 'x' }] }, 'input_guardrails[0].default.contains');
    rejects({ input_guardrails: [{ id: 7 }] }, 'input_guardrails[0].id');
    rejects({ output_guardrails: ['ok', { deny: 'yes' }] }, 'output_guardrails[1].deny');
    rejects({ input_guardrails: 'gr-1' }, 'input_guardrails');
  });

  it('allows deny in outcomes only for output guardrails', () => {
    rejects({ input_guardrails: [{ on_fail: { deny: true } }] }, 'input_guardrails[0].on_fail.deny', /output_guardrails/);
    rejects({ input_guardrails: [{ on_success: { bogus: 1 } }] }, 'input_guardrails[0].on_success.bogus');
    accepts({ output_guardrails: [{ on_success: { deny: false } }] });
  });

  it('scope widens input text only; guardrails_stream_window is a bounded count at the top level', () => {
    accepts({ input_guardrails: [{ scope: 'all_messages', 'default.notNull': {} }], before_request_hooks: [{ id: 'h', scope: 'last_user_message', checks: [] }] });
    rejects({ input_guardrails: [{ scope: 'everything', 'default.notNull': {} }] }, 'input_guardrails[0].scope', /all_messages/);
    rejects({ output_guardrails: [{ scope: 'all_messages', 'default.notNull': {} }] }, 'output_guardrails[0].scope', /input_guardrails/);
    rejects({ after_request_hooks: [{ id: 'h', scope: 'all_messages', checks: [] }] }, 'after_request_hooks[0].scope', /before_request_hooks/);
    accepts({ guardrails_stream_window: 0, output_guardrails: [] });
    accepts({ ...openai, guardrails_stream_window: 100000 });
    rejects({ guardrails_stream_window: -1 }, 'guardrails_stream_window');
    rejects({ guardrails_stream_window: 100001 }, 'guardrails_stream_window');
    rejects(lb({ ...openai, guardrails_stream_window: 10 }), 'targets[0].guardrails_stream_window', /top level/);
  });
});

describe('passthrough', () => {
  it('excludes routing, override and guardrail keys at the root', () => {
    rejects({ passthrough: true, ...lb(openai) }, 'targets', /^config\.targets: is not allowed when passthrough is true$/);
    rejects({ passthrough: true, override_params: { model: 'x' } }, 'override_params');
    rejects({ passthrough: true, input_guardrails: ['g'] }, 'input_guardrails');
    rejects({ passthrough: true, output_guardrails: ['g'] }, 'output_guardrails');
    rejects({ passthrough: true, before_request_hooks: [] }, 'before_request_hooks');
    rejects({ passthrough: true, after_request_hooks: [] }, 'after_request_hooks');
    accepts({ passthrough: true, ...openai, retry: { attempts: 1 } });
    accepts({ passthrough: false, ...lb(openai), override_params: { model: 'x' } });
  });

  it('does not restrict passthrough targets', () => {
    accepts(lb({ passthrough: true, override_params: { model: 'x' } }));
  });
});

describe('provider fields', () => {
  it('checks deployments', () => {
    rejects({ ...openai, deployments: [{ deployment_id: 'd', api_version: 'v' }] }, 'deployments[0].alias', /is required/);
    rejects({ ...openai, deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', is_default: 'yes' }] }, 'deployments[0].is_default');
    accepts({ ...openai, deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', is_default: true }] });
  });

  it('types cloud, vendor and scalar keys', () => {
    rejects({ ...openai, cloud3_deployment_type: 'dedicated' }, 'cloud3_deployment_type');
    rejects({ ...openai, cloud2_service_account_json: '{}' }, 'cloud2_service_account_json');
    rejects({ ...openai, strict_compat_compliance: 'false' }, 'strict_compat_compliance');
    rejects({ ...openai, name: 1 }, 'name');
    rejects({ ...openai, cloud1_region: 1 }, 'cloud1_region');
    rejects({ ...openai, vendor_project: true }, 'vendor_project');
    rejects({ ...openai, Authorization: 1 }, 'Authorization');
    accepts({ ...openai, name: 'n', strict_compat_compliance: false, vendor_organization: 'o', cloud3_entra_scope: 's', Authorization: 'Bearer k' });
  });
});

describe('parsed value', () => {
  it('is deeply frozen and leaves the input alone', () => {
    const raw = lb({ ...openai, override_params: { stop: ['x'] }, retry: { attempts: 1, on_status_codes: [429] } });
    const c = accepts(raw);
    const target = c.targets?.[0];
    assert.ok(Object.isFrozen(c));
    assert.ok(Object.isFrozen(c.targets));
    assert.ok(Object.isFrozen(target?.retry?.on_status_codes));
    assert.ok(Object.isFrozen(target?.override_params?.['stop']));
    assert.equal(Object.isFrozen(raw.targets[0]), false);
    assert.deepEqual(c, raw);
  });
});

describe('edge values', () => {
  it('converts retry codes in the result, not in the input', () => {
    const raw = { retry: { attempts: 1, on_status_codes: ['429', '0503'] } };
    assert.deepEqual(accepts(raw).retry?.on_status_codes, [429, 503]);
    assert.deepEqual(raw.retry.on_status_codes, ['429', '0503']);
  });

  it('answers non-JSON data with a 400 instead of throwing', () => {
    rejects({ ...openai, override_params: { a: NaN } }, 'override_params.a', /^config\.override_params\.a: must be a JSON value$/);
    rejects({ ...openai, override_params: { a: [1, undefined] } }, 'override_params.a[1]');
    rejects({ provider: () => 'openai', api_key: 'k' }, null, /^config: must be JSON data$/);
  });

  it('rejects integers too large to be exact', () => {
    rejects({ request_timeout: 2 ** 60 }, 'request_timeout', /^config\.request_timeout: must be an integer of at least 1$/);
  });

  it('takes custom_host exactly as written', () => {
    rejects({ provider: 'openai', custom_host: ' http://host/v1' }, 'custom_host', /http\(s\) URL/);
    rejects({ provider: 'openai', custom_host: 'http://host/v1\n' }, 'custom_host');
    rejects({ provider: 'openai', custom_host: 'http:host' }, 'custom_host');
    accepts({ provider: 'openai', custom_host: 'HTTPS://host/v1' });
  });
});

describe('parseConfigHeader', () => {
  it('rejects invalid JSON and non-objects', () => {
    for (const header of ['{nope', '', 'pc-config-id']) {
      const r = parseConfigHeader(header);
      if (r.ok) assert.fail(header);
      assert.equal(r.error.status, 400);
      assert.equal(r.error.param, 'x-gateway-config');
      assert.match(r.error.message, /not valid JSON/);
    }
    for (const header of ['[]', 'null', '42', '"x"']) {
      const r = parseConfigHeader(header);
      if (r.ok) assert.fail(header);
      assert.equal(r.error.param, 'x-gateway-config');
      assert.match(r.error.message, /JSON object/);
    }
  });

  it('validates the parsed config', () => {
    const r = parseConfigHeader(JSON.stringify(lb(openai, { ...openai, retry: { attempts: 6 } })));
    if (r.ok) assert.fail('accepted attempts 6');
    assert.equal(r.error.param, 'targets[1].retry.attempts');
  });

  it('returns the identical frozen config for the same header', () => {
    const header = JSON.stringify({ ...openai, retry: { attempts: 3 } });
    const a = parseConfigHeader(header);
    const b = parseConfigHeader(header);
    if (!a.ok || !b.ok) assert.fail('rejected a valid header');
    assert.equal(a.value, b.value);
    assert.ok(Object.isFrozen(a.value));
    const other = parseConfigHeader(JSON.stringify({ ...openai, retry: { attempts: 4 } }));
    if (!other.ok) assert.fail('rejected a valid header');
    assert.notEqual(other.value, a.value);
    assert.equal(parseConfigHeader('{bad').ok, false);
    assert.equal(parseConfigHeader('{bad'), parseConfigHeader('{bad'));
  });

  it('keeps recently used entries and evicts old ones', () => {
    const header = (i: number) => JSON.stringify({ request_timeout: i + 1 });
    const value = (h: string) => {
      const r = parseConfigHeader(h);
      if (!r.ok) assert.fail(h);
      return r.value;
    };
    const kept = JSON.stringify({ prompt_id: 'kept' });
    const first = value(kept);
    for (let i = 0; i < 200; i++) value(header(i));
    assert.equal(value(kept), first, 'a use refreshes the entry');
    for (let i = 200; i < 400; i++) value(header(i));
    assert.equal(value(kept), first, 'still within the bound since its last use');
    for (let i = 400; i < 2000; i++) value(header(i));
    assert.notEqual(value(kept), first, 'evicted once the bound is exceeded');
  });
});

it('conditional queries are checked by the query language: bad operator and bad regex are 400s', () => {
  const base = (query: unknown) => ({
    strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }], default: 'a' },
    targets: [{ name: 'a', provider: 'openai', api_key: 'k' }],
  });
  const badOp = parseConfig(base({ 'metadata.plan': { $foo: 1 } }));
  assert.equal(badOp.ok, false);
  if (!badOp.ok) {
    assert.equal(badOp.error.param, 'strategy.conditions[0].query');
    assert.match(badOp.error.message, /\$foo/);
  }
  const badRegex = parseConfig(base({ $or: [{ 'params.model': { $regex: '(' } }] }));
  assert.equal(badRegex.ok, false);
  if (!badRegex.ok) assert.match(badRegex.error.message, /regular expression/);
  assert.equal(parseConfig(base({ 'params.model': { $regex: '^gpt' } })).ok, true);
});

describe('at most 100 targets in a config, nested ones counted', () => {
  const leaves = (n: number) => Array.from({ length: n }, () => openai);
  const message = /^config\.targets\[\d+\](\.targets\[\d+\])*: is one target too many: a config holds at most 100, nested ones counted$/;

  it('takes 100 and refuses the 101st, naming it', () => {
    assert.equal(MAX_TARGETS, 100);
    accepts(lb(...leaves(100)));
    rejects(lb(...leaves(101)), 'targets[100]', message);
  });

  it('counts groups and their targets at every depth', () => {
    // Ten groups of nine: 10 + 90 = 100.
    const groups = (last: number) => Array.from({ length: 10 }, (_, i) => lb(...leaves(i === 9 ? last : 9)));
    accepts(lb(...groups(9)));
    rejects(lb(...groups(10)), 'targets[9].targets[9]', message);
    rejects({ strategy: { mode: 'fallback' }, targets: [lb(lb(...leaves(98)), openai)] }, 'targets[0].targets[1]', message);
  });
});

describe('config schema: Entra ID client credential keys', () => {
  const keys = { cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c', cloud3_entra_client_secret: 's' };

  it('are accepted as strings, and together with provider form a key group', () => {
    assert.ok(parseConfig({ provider: 'azure-openai', ...keys, resource_name: 'r', deployment_id: 'd', api_version: 'v' }).ok);
    assert.ok(parseConfig({ provider: 'azure-ai', api_key: 'k', ...keys }).ok);
  });

  it('must be strings', () => {
    for (const key of Object.keys(keys)) {
      const r = parseConfig({ provider: 'azure-openai', api_key: 'k', [key]: 42 });
      assert.ok(!r.ok);
      assert.equal(r.error.param, key);
    }
  });

  it('the key group needs all three', () => {
    const r = parseConfig({ provider: 'azure-openai', cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c' });
    assert.ok(!r.ok);
    assert.match(r.error.message, /provider\+cloud3_entra_tenant_id\+cloud3_entra_client_id\+cloud3_entra_client_secret/);
  });
});
