import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyParamEdits } from '../src/routing/params.js';

function clientBody(): Record<string, unknown> {
  return {
    model: 'gpt-4o',
    temperature: 0.2,
    user: null,
    messages: [
      { role: 'system', content: 'be brief', name: 'sys' },
      { role: 'user', content: 'hi', name: 'ann' },
      { role: 'assistant', content: 'hello' },
    ],
    response_format: { type: 'json_schema', json_schema: { name: 's', strict: true, schema: { type: 'object' } } },
  };
}

describe('applyParamEdits', () => {
  it('returns a new top-level object even with no edits', () => {
    const body = clientBody();
    const out = applyParamEdits(body, {});
    assert.notEqual(out, body);
    assert.deepEqual(out, body);
    assert.equal(out.messages, body.messages);
  });

  it('override_params replace the client value, top-level keys whole', () => {
    const body = clientBody();
    const snapshot = structuredClone(body);
    const out = applyParamEdits(body, {
      override_params: { model: 'claude', max_tokens: 10, response_format: { type: 'json_object' } },
    });
    assert.equal(out.model, 'claude');
    assert.equal(out.max_tokens, 10);
    // Not merged into the client's object (Portkey spreads override_params over the body).
    assert.deepEqual(out.response_format, { type: 'json_object' });
    assert.deepEqual(body, snapshot);
  });

  it('default_params fill only keys the client did not send', () => {
    const body = clientBody();
    const out = applyParamEdits(body, { default_params: { temperature: 1, top_p: 0.5, user: 'u', seed: 7 } });
    assert.equal(out.temperature, 0.2);
    assert.equal(out.user, null, 'null was sent, so it stays');
    assert.equal(out.top_p, 0.5);
    assert.equal(out.seed, 7);
  });

  it('override wins over default for the same key', () => {
    const out = applyParamEdits({}, { override_params: { seed: 1 }, default_params: { seed: 2, n: 3 } });
    assert.deepEqual(out, { seed: 1, n: 3 });
  });

  it('drop_params remove top-level keys, nested keys and array elements', () => {
    const body = clientBody();
    const snapshot = structuredClone(body);
    const out = applyParamEdits(body, {
      drop_params: ['temperature', 'messages[0].name', 'response_format.json_schema.strict', 'messages.2', 'absent.path'],
    });
    assert.deepEqual(out, {
      model: 'gpt-4o',
      user: null,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi', name: 'ann' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } },
    });
    assert.deepEqual(body, snapshot);
  });

  it('copies only along the drop path; untouched subtrees are shared', () => {
    const body = clientBody();
    const msgs = body.messages as object[];
    const rf = body.response_format as { json_schema: { schema: object } };
    const out = applyParamEdits(body, { drop_params: ['messages[0].name', 'messages[1].name'] });
    const outMsgs = out.messages as object[];
    assert.notEqual(outMsgs, msgs);
    assert.notEqual(outMsgs[0], msgs[0]);
    assert.notEqual(outMsgs[1], msgs[1]);
    assert.equal(outMsgs[2], msgs[2]);
    assert.equal(out.response_format, rf);
  });

  it('a drop path that is missing copies nothing', () => {
    const body = clientBody();
    const out = applyParamEdits(body, { drop_params: ['messages[2].name', 'messages[9]', 'response_format.x.y'] });
    assert.equal(out.messages, body.messages);
    assert.equal(out.response_format, body.response_format);
  });

  it('every drop path refers to the body as the client sent it', () => {
    const body = { m: ['a', 'b', 'c', 'd'], n: [{ x: 1, y: 1 }, { x: 2, y: 2 }, { x: 3 }] };
    const snapshot = structuredClone(body);
    const out = applyParamEdits(body, { drop_params: ['m[0]', 'm[2]', 'n[0]', 'n[1].x', 'n[1]', 'n[2].x'] });
    assert.deepEqual(out, { m: ['b', 'd'], n: [{}] });
    assert.deepEqual(body, snapshot);
  });

  it('the same element named twice is removed once', () => {
    const out = applyParamEdits({ m: ['a', 'b', 'c'] }, { drop_params: ['m[0]', 'm.0', 'm[0]'] });
    assert.deepEqual(out, { m: ['b', 'c'] });
  });

  it('order is override, default, drop: a drop removes an overridden or defaulted key', () => {
    const body = clientBody();
    const out = applyParamEdits(body, {
      override_params: { model: 'x', logit_bias: { a: 1, b: 2 } },
      default_params: { seed: 1 },
      drop_params: ['model', 'seed', 'logit_bias.a'],
    });
    assert.equal(Object.hasOwn(out, 'model'), false);
    assert.equal(Object.hasOwn(out, 'seed'), false);
    assert.deepEqual(out.logit_bias, { b: 2 });
  });

  it('never changes the config objects either', () => {
    const edits = {
      override_params: { response_format: { type: 'json_schema', json_schema: { strict: true, name: 'n' } } },
      default_params: { tools: [{ type: 'function', function: { name: 'f', strict: true } }] },
      drop_params: ['response_format.json_schema.strict', 'tools[0].function.strict'],
    };
    const snapshot = structuredClone(edits);
    const first = applyParamEdits({ model: 'm' }, edits);
    const second = applyParamEdits({ model: 'm' }, edits);
    assert.deepEqual(edits, snapshot);
    assert.deepEqual(first, second);
    assert.deepEqual(first.response_format, { type: 'json_schema', json_schema: { name: 'n' } });
    assert.deepEqual(first.tools, [{ type: 'function', function: { name: 'f' } }]);
  });

  it('the client body survives repeated application (retries, fallbacks)', () => {
    const body = clientBody();
    const snapshot = structuredClone(body);
    const edits = { drop_params: ['messages[0]', 'response_format.json_schema'] };
    const a = applyParamEdits(body, edits);
    const b = applyParamEdits(body, { override_params: { model: 'other' } });
    assert.deepEqual(a, applyParamEdits(body, edits));
    assert.equal((a.messages as unknown[]).length, 2);
    assert.equal(b.model, 'other');
    assert.deepEqual(body, snapshot);
  });

  it('ignores malformed drop paths', () => {
    const body = clientBody();
    const out = applyParamEdits(body, { drop_params: ['a..b', 'messages[', 'model'] });
    assert.equal(Object.hasOwn(out, 'model'), false);
    assert.equal(out.messages, body.messages);
  });

  it('treats a __proto__ key as data', () => {
    const edits = JSON.parse('{"default_params":{"__proto__":{"polluted":true}}}') as {
      default_params: Record<string, unknown>;
    };
    const out = applyParamEdits({}, edits);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal((out as { polluted?: unknown }).polluted, undefined);
    assert.equal(JSON.stringify(out), '{"__proto__":{"polluted":true}}');
  });
});
