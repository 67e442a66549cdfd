// JSON Schema → Gemini's Schema.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SCHEMA_NODES, toGeminiSchema } from './schema.js';

describe('JSON Schema → Gemini schema', () => {
  it('types, nullability, unions, enums and formats', () => {
    const r = toGeminiSchema(
      {
        type: 'object',
        properties: {
          a: { type: ['integer', 'null'], format: 'int64', minimum: 0, exclusiveMaximum: 10 },
          b: { oneOf: [{ type: 'string' }, { type: 'number', format: 'double' }] },
          c: { type: ['string', 'boolean'], description: 'either' },
          d: { enum: ['x', 'y', null] },
          e: { enum: [1, 2] },
          f: { type: 'string', format: 'uri', pattern: '^h', minLength: 1, maxLength: 9 },
          g: { type: 'array', items: { type: 'string' }, uniqueItems: true, examples: [['q']] },
          h: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['a', 'zz'],
      },
      'p',
    );
    assert.ok(r.ok);
    assert.deepEqual(r.value, {
      type: 'OBJECT',
      properties: {
        a: { type: 'INTEGER', format: 'int64', nullable: true, minimum: 0 },
        b: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER', format: 'double' }] },
        c: { anyOf: [{ type: 'STRING', description: 'either' }, { type: 'BOOLEAN', description: 'either' }], description: 'either' },
        d: { type: 'STRING', nullable: true, enum: ['x', 'y'] },
        e: {},
        f: { type: 'STRING', minLength: '1', maxLength: '9', pattern: '^h' },
        g: { type: 'ARRAY', items: { type: 'STRING' }, example: ['q'] },
        h: { type: 'OBJECT' },
      },
      propertyOrdering: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
      required: ['a'],
    });
  });

  it('inlines $ref (with siblings) and merges allOf', () => {
    const r = toGeminiSchema(
      {
        definitions: { Base: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
        $defs: { Tag: { type: 'string', description: 'a tag' } },
        allOf: [{ $ref: '#/definitions/Base' }, { properties: { tag: { $ref: '#/$defs/Tag', description: 'the tag' } }, required: ['tag'] }],
      },
      'p',
    );
    assert.ok(r.ok);
    assert.deepEqual(r.value, {
      type: 'OBJECT',
      properties: { id: { type: 'STRING' }, tag: { type: 'STRING', description: 'the tag' } },
      propertyOrdering: ['id', 'tag'],
      required: ['id', 'tag'],
    });
  });

  it('refuses what cannot be expressed, naming the place', () => {
    const recursive = toGeminiSchema({ $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' }, 'response_format.json_schema.schema');
    assert.ok(!recursive.ok);
    assert.equal(recursive.error.param, 'response_format.json_schema.schema');
    assert.match(recursive.error.message, /recursive \$ref '#\/\$defs\/Node'/);
    const dangling = toGeminiSchema({ $ref: '#/$defs/Nope' }, 'p');
    assert.ok(!dangling.ok && /does not name a schema/.test(dangling.error.message));
    const tuple = toGeminiSchema({ type: 'array', items: [{ type: 'string' }] }, 'p');
    assert.ok(!tuple.ok && /tuple/.test(tuple.error.message));
  });

  it('refuses a schema that expands past MAX_SCHEMA_NODES, however small it is written', () => {
    // Each definition uses the next twice: 40 levels are ~3 KB, and 2^40 schemas once inlined.
    const $defs: Record<string, unknown> = { d40: { type: 'string' } };
    for (let i = 39; i >= 0; i--) $defs[`d${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/d${i + 1}` }, b: { $ref: `#/$defs/d${i + 1}` } } };
    const refs = toGeminiSchema({ $defs, $ref: '#/$defs/d0' }, 'tools[0].function.parameters');
    assert.ok(!refs.ok);
    assert.equal(refs.error.param, 'tools[0].function.parameters');
    assert.match(refs.error.message, new RegExp(`expands to more than ${MAX_SCHEMA_NODES} schemas`));
    // allOf of the same definition twice, flattened with no conversion between.
    const merged: Record<string, unknown> = { m40: { type: 'object', properties: { x: { type: 'string' } } } };
    for (let i = 39; i >= 0; i--) merged[`m${i}`] = { allOf: [{ $ref: `#/$defs/m${i + 1}` }, { $ref: `#/$defs/m${i + 1}` }] };
    assert.ok(!toGeminiSchema({ $defs: merged, $ref: '#/$defs/m0' }, 'p').ok);
    // Type lists of six types nested: one schema per type at every level.
    let nested: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 12; i++) nested = { type: ['string', 'number', 'integer', 'boolean', 'array', 'object'], items: nested, properties: { v: nested } };
    assert.ok(!toGeminiSchema(nested, 'p').ok);
    // Below the bound a schema with shared definitions is still inlined.
    const small = toGeminiSchema({ $defs: Object.fromEntries(Object.entries($defs).filter(([k]) => Number(k.slice(1)) >= 30)), $ref: '#/$defs/d30' }, 'p');
    assert.ok(small.ok, JSON.stringify(small));
  });
});
