// JSON Schema → Gemini's Schema.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toGeminiSchema } from './schema.js';

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
});
