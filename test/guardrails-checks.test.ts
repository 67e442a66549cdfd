// The built-in default.* checks: each passes, fails, is inverted by `not`,
// errors where it cannot judge, and refuses bad parameters at config
// validation with the config path of the parameter.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../src/config/schema.js';
import type { HookKind } from '../src/guardrails/check.js';
import { runHooks } from '../src/guardrails/engine.js';
import type { CheckResult } from '../src/guardrails/results.js';
import { compileHooks } from '../src/guardrails/hooks.js';
import { words } from '../src/guardrails/checks/counts.js';
import fc from 'fast-check';

interface Case {
  kind?: HookKind;
  endpoint?: 'chat' | 'completions' | 'embeddings';
  text?: string;
  model?: string;
  metadata?: Record<string, string>;
  request?: Record<string, unknown>;
}

function compiled(id: string, parameters: Record<string, unknown>, kind: HookKind) {
  const key = kind === 'before' ? 'before_request_hooks' : 'after_request_hooks';
  const hooks = compileHooks({ [key]: [{ id: 'h', checks: [{ id, parameters }] }] }, { left: 500 });
  if (!hooks.ok) assert.fail(`${id} ${JSON.stringify(parameters)}: ${hooks.problem.message}`);
  return hooks.value[kind];
}

async function judge(id: string, parameters: Record<string, unknown>, c: Case = {}): Promise<CheckResult & { json: Record<string, unknown> }> {
  const kind = c.kind ?? 'after';
  const endpoint = c.endpoint ?? 'chat';
  const text = c.text ?? 'hello world';
  const request = c.request ?? (endpoint === 'chat' ? { model: c.model ?? 'gpt-4o', messages: [{ role: 'user', content: text }] } : { model: c.model ?? 'gpt-4o', prompt: text, input: text });
  const answer = kind === 'after' ? { choices: [{ index: 0, message: { role: 'assistant', content: text } }] } : null;
  const run = await runHooks(compiled(id, parameters, kind), { kind, endpoint, requestType: endpoint === 'chat' ? 'chatComplete' : 'complete', model: c.model ?? 'gpt-4o', metadata: c.metadata ?? {}, request, answer });
  return { ...run.results[0]!.checks[0]!, json: run.json };
}

/** Passes on `yes`, fails on `no`, and `not` swaps the two. */
async function passFailNot(id: string, parameters: Record<string, unknown>, yes: Case, no: Case): Promise<void> {
  assert.equal((await judge(id, parameters, yes)).verdict, true, `${id} should pass`);
  assert.equal((await judge(id, parameters, no)).verdict, false, `${id} should fail`);
  assert.equal((await judge(id, { ...parameters, not: true }, yes)).verdict, false, `${id} with not should fail`);
  assert.equal((await judge(id, { ...parameters, not: true }, no)).verdict, true, `${id} with not should pass`);
}

/** The 400 of a config whose check has these parameters: its param and message. */
function refused(id: string, parameters: Record<string, unknown>, key = 'before_request_hooks'): { param: string | null; message: string } {
  const r = parseConfig({ [key]: [{ id: 'h', checks: [{ id, parameters }] }] });
  if (r.ok) assert.fail(`expected ${id} ${JSON.stringify(parameters)} to be refused`);
  assert.equal(r.error.status, 400);
  return { param: r.error.param, message: r.error.message };
}

function refusesAt(id: string, parameters: Record<string, unknown>, param: string, message?: RegExp): void {
  const r = refused(id, parameters);
  assert.equal(r.param, `before_request_hooks[0].checks[0].parameters${param === '' ? '' : `.${param}`}`, r.message);
  if (message !== undefined) assert.match(r.message, message);
}

async function errors(id: string, parameters: Record<string, unknown>, c: Case): Promise<void> {
  const r = await judge(id, parameters, c);
  assert.notEqual(r.error, null, `${id} should error`);
  assert.equal(r.verdict, false);
}

describe('default.regexMatch', () => {
  it('passes when the pattern matches', () => passFailNot('default.regexMatch', { rule: '\\d{3}' }, { text: 'call 555 now' }, { text: 'no digits' }));
  it('errors on an empty text', () => errors('default.regexMatch', { rule: 'a' }, { text: '  ' }));
  it('refuses a pattern RE2 cannot run in linear time, a bad one, a missing one', () => {
    refusesAt('default.regexMatch', { rule: '(a)\\1' }, 'rule', /linear-time/);
    refusesAt('default.regexMatch', { rule: '(' }, 'rule', /invalid regular expression/);
    refusesAt('default.regexMatch', {}, 'rule', /is required/);
    refusesAt('default.regexMatch', { rule: 'a', nope: 1 }, 'nope', /unknown key/);
    refusesAt('default.regexMatch', { rule: 'a', not: 'yes' }, 'not');
  });
  it('charges its patterns to the config budget', () => {
    refusesAt('default.regexMatch', { rule: '(?:[a-z]?){100}' }, 'rule', /weigh more than/);
  });
});

describe('default.regexReplace', () => {
  it('replaces matches in the text and passes', async () => {
    const r = await judge('default.regexReplace', { rule: '/\\d{3}-\\d{4}/g', redactText: '[PHONE]' }, { kind: 'before', text: 'call 555-1234 or 555-9876' });
    assert.equal(r.verdict, true);
    assert.equal(r.transformed, true);
    assert.deepEqual((r.json.messages as { content: string }[])[0]!.content, 'call [PHONE] or [PHONE]');
  });
  it('without g replaces the first match only; default text [REDACTED]', async () => {
    const r = await judge('default.regexReplace', { rule: '\\d+' }, { kind: 'after', text: 'a1 b2' });
    assert.equal(((r.json.choices as { message: { content: string } }[])[0]!.message.content), 'a[REDACTED] b2');
  });
  it('fails on detection when asked; not inverts', async () => {
    await passFailNot('default.regexReplace', { rule: 'secret', failOnDetection: true }, { text: 'nothing here' }, { text: 'a secret' });
  });
  it('refuses bad patterns and flags', () => {
    refusesAt('default.regexReplace', { rule: '(?=x)' }, 'rule', /linear-time/);
    refusesAt('default.regexReplace', { rule: 'a', redactText: 1 }, 'redactText');
    refusesAt('default.regexReplace', { rule: '' }, 'rule');
  });
});

describe('default.contains', () => {
  it('any', () => passFailNot('default.contains', { words: ['apple', 'pear'], operator: 'any' }, { text: 'an apple' }, { text: 'a plum' }));
  it('all', () => passFailNot('default.contains', { words: ['apple', 'pear'], operator: 'all' }, { text: 'apple and pear' }, { text: 'an apple' }));
  it('none', () => passFailNot('default.contains', { words: ['apple'], operator: 'none' }, { text: 'a plum' }, { text: 'an apple' }));
  it('refuses a bad operator or no words', () => {
    refusesAt('default.contains', { words: ['a'], operator: 'some' }, 'operator', /any, all, none/);
    refusesAt('default.contains', { words: [] }, 'words');
    refusesAt('default.contains', { operator: 'any' }, 'words', /is required/);
  });
});

describe('counts', () => {
  it('wordCount', () => passFailNot('default.wordCount', { minWords: 2, maxWords: 3 }, { text: 'one two three' }, { text: 'one two three four' }));
  it('sentenceCount', () => passFailNot('default.sentenceCount', { minSentences: 2 }, { text: 'One. Two!' }, { text: 'Only one.' }));
  it('characterCount', () => passFailNot('default.characterCount', { maxCharacters: 5 }, { text: 'short' }, { text: 'longer' }));
  it('wordCount counts words as trim().split(/\\s+/) does: every UTF-16 unit a space exactly when \\s says so', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      assert.equal(words(`a${ch}b`), /\s/.test(ch) ? 2 : 1, `U+${c.toString(16)}`);
    }
    const spaces = fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028');
    const text = fc.array(fc.oneof(spaces, fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (t) => t.trim() === '' || words(t) === t.trim().split(/\s+/).length),
      { seed: 20_261_126, numRuns: 2_000 },
    );
  });
  it('wordCount and characterCount error on an empty text', async () => {
    await errors('default.wordCount', {}, { text: '' });
    await errors('default.characterCount', {}, { text: '' });
  });
  it('refuses a range upside down, a negative or fractional bound', () => {
    refusesAt('default.wordCount', { minWords: 5, maxWords: 2 }, 'maxWords', /at least minWords/);
    refusesAt('default.characterCount', { minCharacters: -1 }, 'minCharacters');
    refusesAt('default.sentenceCount', { maxSentences: 1.5 }, 'maxSentences');
  });
});

describe('default.jsonSchema', () => {
  const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  it('passes when JSON in the text (whole, fenced or inline) is valid', async () => {
    await passFailNot('default.jsonSchema', { schema }, { text: '{"name":"x"}' }, { text: '{"age":3}' });
    assert.equal((await judge('default.jsonSchema', { schema }, { text: 'Here:\n```json\n{"name":"x"}\n```' })).verdict, true);
    assert.equal((await judge('default.jsonSchema', { schema }, { text: 'Sure! {"a":{"b":1}} and {"name":"y"} done' })).verdict, true);
  });
  it('fails without JSON, and reports validation errors', async () => {
    assert.equal((await judge('default.jsonSchema', { schema }, { text: 'no json' })).verdict, false);
    const r = await judge('default.jsonSchema', { schema }, { text: '{"name":1}' });
    assert.deepEqual((r.data!.validationErrors as { path: string }[])[0]!.path, '/name');
  });
  it('reads draft 2020-12 (prefixItems)', async () => {
    const tuple = { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], items: false };
    await passFailNot('default.jsonSchema', { schema: tuple }, { text: '[1, "a"]' }, { text: '[1, 2]' });
  });
  it('refuses what is not a schema', () => {
    refusesAt('default.jsonSchema', { schema: { type: 'nope' } }, 'schema', /not a valid JSON Schema/);
    refusesAt('default.jsonSchema', { schema: 'x' }, 'schema');
  });
});

describe('default.jsonKeys', () => {
  it('any / all / none', async () => {
    await passFailNot('default.jsonKeys', { keys: ['a', 'b'], operator: 'all' }, { text: '{"a":1,"b":2}' }, { text: '{"a":1}' });
    await passFailNot('default.jsonKeys', { keys: ['a', 'b'] }, { text: '{"b":1}' }, { text: '{"c":1}' });
    await passFailNot('default.jsonKeys', { keys: ['a'], operator: 'none' }, { text: '{"c":1}' }, { text: '{"a":1}' });
  });
  it('refuses no keys', () => refusesAt('default.jsonKeys', { keys: [] }, 'keys'));
});

describe('default.validUrls', () => {
  it('passes when every URL is well-formed (no network)', () =>
    passFailNot('default.validUrls', {}, { text: 'see https://example.com/a?b=1. and http://10.0.0.1:8080/x' }, { text: 'see https://exa_mple..com/ and https://ok.example' }));
  it('fails without URLs; refuses a bad onlyDNS', async () => {
    assert.equal((await judge('default.validUrls', {}, { text: 'none' })).verdict, false);
    refusesAt('default.validUrls', { onlyDNS: 'yes' }, 'onlyDNS');
  });
});

describe('default.containsCode', () => {
  it('finds a fence in the language', () => passFailNot('default.containsCode', { format: 'Python' }, { text: 'x\n```py\nprint(1)\n```' }, { text: '```js\nf()\n```' }));
  it('refuses an unknown format', () => refusesAt('default.containsCode', { format: 'Cobol' }, 'format'));
});

describe('letters, suffix, null', () => {
  it('alluppercase', () => passFailNot('default.alluppercase', {}, { text: 'HELLO, WORLD 1' }, { text: 'Hello' }));
  it('alllowercase', () => passFailNot('default.alllowercase', {}, { text: 'hello, world' }, { text: 'Hello' }));
  it('endsWith, a trailing period allowed', async () => {
    await passFailNot('default.endsWith', { suffix: 'thanks' }, { text: 'ok thanks.' }, { text: 'thanks ok' });
    refusesAt('default.endsWith', { suffix: '' }, 'suffix');
  });
  it('notNull', () => passFailNot('default.notNull', {}, { text: 'x' }, { text: '   ' }));
  it('refuses parameters they do not take', () => refusesAt('default.alluppercase', { rule: 'x' }, 'rule'));
});

describe('request checks', () => {
  it('modelWhitelist', async () => {
    await passFailNot('default.modelWhitelist', { models: ['gpt-4o'] }, { kind: 'before', model: 'gpt-4o' }, { kind: 'before', model: 'o3' });
    await errors('default.modelWhitelist', { models: ['gpt-4o'] }, { kind: 'before', model: '' });
    refusesAt('default.modelWhitelist', { models: 'gpt-4o' }, 'models');
  });
  it('modelRules: metadata rules, else defaults', async () => {
    const rules = { defaults: ['small'], metadata: { tier: { pro: ['big'] } } };
    await passFailNot('default.modelRules', { rules }, { kind: 'before', model: 'big', metadata: { tier: 'pro' } }, { kind: 'before', model: 'big', metadata: { tier: 'free' } });
    assert.equal((await judge('default.modelRules', { rules }, { kind: 'before', model: 'small' })).verdict, true);
    // A metadata value naming an inherited property matches no rule: the defaults decide, and the check does not error.
    for (const tier of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      assert.equal((await judge('default.modelRules', { rules }, { kind: 'before', model: 'big', metadata: { tier } })).verdict, false, tier);
    }
    refusesAt('default.modelRules', { rules: {} }, 'rules', /at least one model/);
    refusesAt('default.modelRules', { rules: { metadata: { tier: { pro: 'big' } } } }, 'rules.metadata.tier.pro');
  });
  it('allowedRequestTypes: allowed, blocked, metadata', async () => {
    await passFailNot('default.allowedRequestTypes', { allowedTypes: ['chatComplete'] }, { kind: 'before' }, { kind: 'before', endpoint: 'completions' });
    await passFailNot('default.allowedRequestTypes', { blockedTypes: 'complete, embed' }, { kind: 'before' }, { kind: 'before', endpoint: 'completions' });
    assert.equal((await judge('default.allowedRequestTypes', {}, { kind: 'before', metadata: { blocked_endpoints: 'chatComplete' } })).verdict, false);
    refusesAt('default.allowedRequestTypes', { allowedTypes: ['chat'] }, 'allowedTypes', /unknown request type "chat"/);
    refusesAt('default.allowedRequestTypes', { allowedTypes: ['embed'], blockedTypes: ['embed'] }, 'blockedTypes');
  });
});

describe('metadata checks', () => {
  it('requiredMetadataKeys: all by default, any, none', async () => {
    await passFailNot('default.requiredMetadataKeys', { metadataKeys: ['team', 'env'] }, { kind: 'before', metadata: { team: 'a', env: 'b' } }, { kind: 'before', metadata: { team: 'a' } });
    await passFailNot('default.requiredMetadataKeys', { metadataKeys: ['team'], operator: 'none' }, { kind: 'before' }, { kind: 'before', metadata: { team: 'a' } });
    refusesAt('default.requiredMetadataKeys', { metadataKeys: ['a'], operator: 'most' }, 'operator');
  });
  it('requiredMetadataKeyPairs: exact, contains, containsAll, regex', async () => {
    const id = 'default.requiredMetadataKeyPairs';
    await passFailNot(id, { metadataPairs: { env: 'prod' } }, { kind: 'before', metadata: { env: 'prod' } }, { kind: 'before', metadata: { env: 'production' } });
    await passFailNot(id, { metadataPairs: { env: 'prod' }, matchType: 'contains' }, { kind: 'before', metadata: { env: 'production' } }, { kind: 'before', metadata: { env: 'dev' } });
    await passFailNot(id, { metadataPairs: { tags: 'a, b' }, matchType: 'containsAll' }, { kind: 'before', metadata: { tags: 'b,c,a' } }, { kind: 'before', metadata: { tags: 'a,c' } });
    await passFailNot(id, { metadataPairs: { user: '^u-\\d+$' }, matchType: 'regex' }, { kind: 'before', metadata: { user: 'u-12' } }, { kind: 'before', metadata: { user: 'x-12' } });
    await passFailNot(id, { metadataPairs: { a: '1', b: '2' }, operator: 'any' }, { kind: 'before', metadata: { b: '2' } }, { kind: 'before', metadata: {} });
  });
  it('requiredMetadataKeyPairs refuses bad pairs, match types and patterns', () => {
    const id = 'default.requiredMetadataKeyPairs';
    refusesAt(id, { metadataPairs: {} }, 'metadataPairs');
    refusesAt(id, { metadataPairs: { a: 1 } }, 'metadataPairs.a');
    refusesAt(id, { metadataPairs: { a: 'x' }, matchType: 'fuzzy' }, 'matchType');
    refusesAt(id, { metadataPairs: { a: '(?<=x)' }, matchType: 'regex' }, 'metadataPairs.a', /linear-time/);
  });
  it('runs only before the request', () => {
    const r = refused('default.requiredMetadataKeys', { metadataKeys: ['a'] }, 'after_request_hooks');
    assert.equal(r.param, 'after_request_hooks[0].checks[0].id');
    assert.match(r.message, /only before the request/);
  });
});

describe('default.addPrefix', () => {
  it('prefixes the first user message, or adds a message', async () => {
    const r = await judge('default.addPrefix', { prefix: 'Be brief. ' }, { kind: 'before', text: 'hi' });
    assert.deepEqual(r.json.messages, [{ role: 'user', content: 'Be brief. hi' }]);
    const sys = await judge('default.addPrefix', { prefix: 'You are kind.', applyToRole: 'system' }, { kind: 'before', text: 'hi' });
    assert.deepEqual(sys.json.messages, [{ role: 'system', content: 'You are kind.' }, { role: 'user', content: 'hi' }]);
    const apart = await judge('default.addPrefix', { prefix: 'P', addToExisting: false }, { kind: 'before', text: 'hi' });
    assert.deepEqual(apart.json.messages, [{ role: 'user', content: 'P' }, { role: 'user', content: 'hi' }]);
    const kept = await judge('default.addPrefix', { prefix: 'P', onlyIfEmpty: true }, { kind: 'before', text: 'hi' });
    assert.deepEqual(kept.json.messages, [{ role: 'user', content: 'hi' }]);
  });
  it('prefixes the prompt of a completion; passes, and not inverts', async () => {
    const r = await judge('default.addPrefix', { prefix: 'Q: ' }, { kind: 'before', endpoint: 'completions', text: 'why' });
    assert.equal(r.json.prompt, 'Q: why');
    assert.equal(r.verdict, true);
    assert.equal((await judge('default.addPrefix', { prefix: 'Q', not: true }, { kind: 'before' })).verdict, false);
  });
  it('refuses a bad role or an empty prefix', () => {
    refusesAt('default.addPrefix', { prefix: 'x', applyToRole: 'tool' }, 'applyToRole');
    refusesAt('default.addPrefix', { prefix: '' }, 'prefix');
  });
});

describe('what a config may name', () => {
  it('refuses an unknown check, naming its id', () => {
    const r = refused('default.nope', {});
    assert.equal(r.param, 'before_request_hooks[0].checks[0].id');
    assert.match(r.message, /not a check this gateway runs/);
  });
  it('names a guardrail item parameter by its check key', () => {
    const r = parseConfig({ input_guardrails: [{ 'default.regexMatch': { rule: '(' } }] });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.param, 'input_guardrails[0].default.regexMatch.rule');
  });
  it('refuses hooks on a target: they run at the top level', () => {
    const r = parseConfig({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'k', input_guardrails: [] }] });
    assert.equal(!r.ok && r.error.param, 'targets[0].input_guardrails');
  });
});
