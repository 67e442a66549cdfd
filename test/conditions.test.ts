import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateQuery } from '../src/config/query.js';
import { evaluateQuery, type QueryContext } from '../src/routing/conditions.js';
import { MAX_MATCH_CHARS, MAX_PATTERN_WEIGHT } from '../src/shared/linear-regex.js';

const ctx: QueryContext = {
  metadata: { tier: 'pro', region: 'eu-west', level: '10', '0': 'zero' },
  params: {
    model: 'gpt-4o-mini',
    temperature: 0.7,
    n: 2,
    stream: false,
    user: null,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ],
    response_format: { type: 'json_schema', json_schema: { strict: true } },
  },
  url: { pathname: '/v1/chat/completions' },
};

function matches(query: object): boolean {
  assert.equal(validateQuery(query), null, `expected a valid query: ${JSON.stringify(query)}`);
  return evaluateQuery(query, ctx);
}

describe('fields', () => {
  it('literal means $eq on metadata, params and url.pathname', () => {
    assert.equal(matches({ 'metadata.tier': 'pro' }), true);
    assert.equal(matches({ 'metadata.tier': 'free' }), false);
    assert.equal(matches({ 'params.model': 'gpt-4o-mini' }), true);
    assert.equal(matches({ 'params.stream': false }), true);
    assert.equal(matches({ 'params.user': null }), true);
    assert.equal(matches({ 'params.absent': null }), false);
    assert.equal(matches({ 'url.pathname': '/v1/chat/completions' }), true);
    assert.equal(matches({ 'metadata.0': 'zero' }), true);
  });

  it('params paths reach nested keys and array indices', () => {
    assert.equal(matches({ 'params.messages[0].role': 'system' }), true);
    assert.equal(matches({ 'params.messages.1.content': 'hi' }), true);
    assert.equal(matches({ 'params.messages[2].role': 'user' }), false);
    assert.equal(matches({ 'params.response_format.json_schema.strict': true }), true);
  });

  it('several keys in one object are ANDed', () => {
    assert.equal(matches({ 'metadata.tier': 'pro', 'params.n': 2 }), true);
    assert.equal(matches({ 'metadata.tier': 'pro', 'params.n': 3 }), false);
  });

  it('an empty query matches everything', () => {
    assert.equal(matches({}), true);
  });
});

describe('operators', () => {
  it('$eq and $ne', () => {
    assert.equal(matches({ 'params.model': { $eq: 'gpt-4o-mini' } }), true);
    assert.equal(matches({ 'params.n': { $eq: '2' } }), false, 'strict equality');
    assert.equal(matches({ 'params.model': { $ne: 'gpt-4o-mini' } }), false);
    assert.equal(matches({ 'params.model': { $ne: 'other' } }), true);
    assert.equal(matches({ 'params.absent': { $ne: 'x' } }), true);
    assert.equal(matches({ 'params.absent': { $eq: 'x' } }), false);
  });

  it('$in and $nin', () => {
    assert.equal(matches({ 'metadata.tier': { $in: ['pro', 'enterprise'] } }), true);
    assert.equal(matches({ 'metadata.tier': { $in: ['free'] } }), false);
    assert.equal(matches({ 'metadata.tier': { $nin: ['free'] } }), true);
    assert.equal(matches({ 'metadata.tier': { $nin: ['pro'] } }), false);
    assert.equal(matches({ 'params.absent': { $in: ['x', null] } }), false);
    assert.equal(matches({ 'params.absent': { $nin: ['x'] } }), true);
  });

  it('$regex on strings only', () => {
    assert.equal(matches({ 'params.model': { $regex: '^gpt-4o' } }), true);
    assert.equal(matches({ 'params.model': { $regex: '^claude' } }), false);
    assert.equal(matches({ 'url.pathname': { $regex: '/chat/' } }), true);
    assert.equal(matches({ 'params.n': { $regex: '2' } }), false);
    assert.equal(matches({ 'params.absent': { $regex: '.*' } }), false);
  });

  it('$gt $gte $lt $lte compare numbers', () => {
    assert.equal(matches({ 'params.temperature': { $gt: 0.5 } }), true);
    assert.equal(matches({ 'params.temperature': { $gt: 0.7 } }), false);
    assert.equal(matches({ 'params.temperature': { $gte: 0.7 } }), true);
    assert.equal(matches({ 'params.temperature': { $lt: 0.7 } }), false);
    assert.equal(matches({ 'params.temperature': { $lte: 0.7 } }), true);
    assert.equal(matches({ 'params.n': { $gte: 1, $lt: 3 } }), true, 'operators in one object are ANDed');
    assert.equal(matches({ 'params.n': { $gte: 1, $lt: 2 } }), false);
  });

  it('comparisons: strings lexicographically, numeric metadata strings numerically', () => {
    assert.equal(matches({ 'metadata.region': { $gt: 'eu' } }), true);
    assert.equal(matches({ 'metadata.region': { $lt: 'eu' } }), false);
    assert.equal(matches({ 'metadata.level': { $gt: 9 } }), true, 'numeric operand: "10" is 10');
    assert.equal(matches({ 'metadata.level': { $gt: '9' } }), false, 'string operand: "10" < "9"');
    assert.equal(matches({ 'metadata.tier': { $gt: 1 } }), false);
    assert.equal(matches({ 'params.n': { $gt: '1' } }), false, 'number against string operand');
  });

  it('comparisons on missing fields are false', () => {
    for (const op of ['$gt', '$gte', '$lt', '$lte']) {
      assert.equal(matches({ 'params.absent': { [op]: 0 } }), false, op);
      assert.equal(matches({ 'params.user': { [op]: 0 } }), false, `${op} on null`);
    }
  });

  it('$exists', () => {
    assert.equal(matches({ 'params.model': { $exists: true } }), true);
    assert.equal(matches({ 'params.model': { $exists: false } }), false);
    assert.equal(matches({ 'params.absent': { $exists: false } }), true);
    assert.equal(matches({ 'params.absent': { $exists: true } }), false);
    assert.equal(matches({ 'params.user': { $exists: true } }), true, 'null is present');
    assert.equal(matches({ 'params.messages[1].name': { $exists: false } }), true);
    assert.equal(matches({ 'metadata.missing': { $exists: false } }), true);
  });
});

describe('logical operators', () => {
  it('$and and $or', () => {
    assert.equal(matches({ $and: [{ 'metadata.tier': 'pro' }, { 'params.n': 2 }] }), true);
    assert.equal(matches({ $and: [{ 'metadata.tier': 'pro' }, { 'params.n': 3 }] }), false);
    assert.equal(matches({ $or: [{ 'metadata.tier': 'free' }, { 'params.n': 2 }] }), true);
    assert.equal(matches({ $or: [{ 'metadata.tier': 'free' }, { 'params.n': 3 }] }), false);
  });

  it('$or inside $and inside $or', () => {
    const q = (tier: string) => ({
      $or: [
        { 'url.pathname': '/v1/embeddings' },
        {
          $and: [
            { 'metadata.tier': tier },
            { $or: [{ 'params.model': { $regex: '^claude' } }, { 'params.messages[0].role': { $in: ['system'] } }] },
          ],
        },
      ],
    });
    assert.equal(matches(q('pro')), true);
    assert.equal(matches(q('free')), false);
  });

  it('logical keys AND with field keys beside them', () => {
    assert.equal(matches({ 'metadata.tier': 'free', $or: [{ 'params.n': 2 }] }), false);
    assert.equal(matches({ $or: [{ 'params.n': 2 }], 'metadata.tier': 'free' }), false);
    assert.equal(matches({ $or: [{ 'params.n': 2 }], $and: [{ 'metadata.tier': 'pro' }] }), true);
  });
});

describe('validateQuery', () => {
  const cases: [unknown, string][] = [
    [null, 'query: must be an object'],
    [[], 'query: must be an object'],
    [{ $or: [{}, { 'params.model': { $regex: '(' } }] }, '$or[1].params.model.$regex: invalid regular expression: Invalid regular expression: /(/: Unterminated group'],
    [{ 'params.model': { $foo: 1 } }, 'params.model.$foo: unknown operator $foo'],
    [{ $and: [{ $or: [{ $nor: [] }] }] }, '$and[0].$or[0].$nor: unknown operator $nor'],
    [{ 'headers.x': 'y' }, 'headers.x: unknown field (expected metadata.<key>, params.<path> or url.pathname)'],
    [{ model: 'y' }, 'model: unknown field (expected metadata.<key>, params.<path> or url.pathname)'],
    [{ 'url.host': 'y' }, 'url.host: unknown field (expected metadata.<key>, params.<path> or url.pathname)'],
    [{ params: 'y' }, 'params: unknown field (expected metadata.<key>, params.<path> or url.pathname)'],
    [{ 'metadata.a.b': 'y' }, 'metadata.a.b: metadata.<key> takes a single key'],
    [{ 'params.a..b': 1 }, 'params.a..b: invalid path (expected keys joined by "." with optional [index] suffixes)'],
    [{ $or: [] }, '$or: must be a non-empty array of queries'],
    [{ $and: {} }, '$and: must be a non-empty array of queries'],
    [{ $or: [{}, 'x'] }, '$or[1]: must be an object'],
    [{ 'params.stop': ['a'] }, 'params.stop: must be a string, number, boolean, null or an object of operators'],
    [{ 'params.n': {} }, 'params.n: must name at least one operator'],
    [{ 'params.n': { $eq: [1] } }, 'params.n.$eq: must be a string, number, boolean or null'],
    [{ 'params.n': { $ne: { a: 1 } } }, 'params.n.$ne: must be a string, number, boolean or null'],
    [{ 'params.n': { $in: 'pro' } }, 'params.n.$in: must be an array of strings, numbers, booleans or nulls'],
    [{ 'params.n': { $nin: [[1]] } }, 'params.n.$nin: must be an array of strings, numbers, booleans or nulls'],
    [{ 'params.n': { $regex: 1 } }, 'params.n.$regex: must be a string'],
    [{ 'params.n': { $gt: null } }, 'params.n.$gt: must be a number or a string'],
    [{ 'params.n': { $lte: true } }, 'params.n.$lte: must be a number or a string'],
    [{ 'params.n': { $exists: 1 } }, 'params.n.$exists: must be true or false'],
  ];
  for (const [query, message] of cases) {
    it(message, () => assert.equal(validateQuery(query), message));
  }

  it('accepts every operator', () => {
    assert.equal(
      validateQuery({
        'metadata.tier': { $eq: 'a', $ne: null, $in: ['a', 1, true, null], $nin: [], $regex: '^a', $exists: true },
        'params.messages[0].content': { $gt: 1, $gte: 'a', $lt: 2, $lte: 'z' },
        'url.pathname': '/v1/chat/completions',
        $and: [{ $or: [{ 'params.n': 1 }] }],
      }),
      null,
    );
  });
});

describe('$regex runs in linear time on bounded input', () => {
  const LINEAR = 'not supported by the linear-time engine (no backreferences or lookaround)';
  const refused: [string, string][] = [
    ['(?=a)a', 'invalid perl operator: (?='],
    ['(?!a)b', 'invalid perl operator: (?!'],
    ['(?<=a)b', 'invalid perl operator: (?<='],
    ['(a)\\1', 'invalid escape sequence: \\1'],
    ['(?<n>a)\\k<n>', 'invalid escape sequence: \\k'],
  ];
  for (const [pattern, why] of refused) {
    it(`refuses ${pattern} at validation, naming the place`, () => {
      assert.equal(validateQuery({ $or: [{ 'params.model': { $regex: pattern } }] }), `$or[0].params.model.$regex: ${LINEAR}: ${why}`);
    });
  }

  it('^(a+)+$, catastrophic for a backtracking engine, answers at once on the longest value it matches', () => {
    const query = { 'params.model': { $regex: '^(a+)+$' } };
    assert.equal(validateQuery(query), null);
    const evil = { ...ctx, params: { model: 'a'.repeat(MAX_MATCH_CHARS - 1) + 'b' } };
    const started = performance.now();
    assert.equal(evaluateQuery(query, evil), false);
    assert.equal(evaluateQuery(query, { ...ctx, params: { model: 'a'.repeat(MAX_MATCH_CHARS) } }), true);
    // RE2 takes well under a millisecond; JavaScript's RegExp would run for longer than the universe has.
    assert.ok(performance.now() - started < 50, `took ${performance.now() - started} ms`);
  });

  it(`a value longer than ${MAX_MATCH_CHARS} characters never matches`, () => {
    const query = { 'params.model': { $regex: '^a' } };
    assert.equal(evaluateQuery(query, { ...ctx, params: { model: 'a'.repeat(MAX_MATCH_CHARS + 1) } }), false);
  });

  it('weighs patterns: counted repetitions multiply, sets of characters cost more, the whole query shares one budget', () => {
    const over = `the config's patterns weigh more than ${MAX_PATTERN_WEIGHT}`;
    assert.equal(validateQuery({ 'params.model': { $regex: `(?:a?){${MAX_PATTERN_WEIGHT - 1}}x` } }), null);
    assert.ok(validateQuery({ 'params.model': { $regex: `(?:a?){${MAX_PATTERN_WEIGHT}}x` } })?.startsWith(`params.model.$regex: ${over}`));
    assert.ok(validateQuery({ 'params.model': { $regex: '(?:[^a]?){51}' } })?.includes(over), 'a class weighs ten');
    assert.ok(validateQuery({ 'params.model': { $regex: '\\p{L}{6}' } })?.includes(over), 'a Unicode property weighs a hundred');
    const half = `(?:a?){${MAX_PATTERN_WEIGHT / 2}}`;
    assert.equal(validateQuery({ 'params.model': { $regex: half } }), null);
    assert.ok(validateQuery({ $or: [{ 'params.model': { $regex: half } }, { 'metadata.tier': { $regex: half + 'x' } }] })?.startsWith(`$or[1].metadata.tier.$regex: ${over}`));
  });
});

describe('invalid queries at request time never throw and never match', () => {
  const unvalidated: object[] = [
    { 'params.model': { $regex: '(' } },
    { 'params.model': { $regex: '[' }, 'metadata.tier': 'pro' },
    { 'params.model': { $foo: 1 } },
    { 'headers.x': { $exists: false } },
    { constructor: { $exists: true } },
    { $nor: [{ 'metadata.tier': 'pro' }] },
    { $or: 'x' },
    { $and: [] },
    { $and: [null] },
    { $or: [null, 1] },
    { 'params.model': { $in: 'gpt-4o-mini' } },
    { 'params.absent': { $nin: 'x' } },
    { 'params.model': { $exists: 'yes' } },
  ];
  for (const q of unvalidated) {
    it(JSON.stringify(q), () => {
      assert.notEqual(validateQuery(q), null);
      assert.equal(evaluateQuery(q, ctx), false);
    });
  }
});
