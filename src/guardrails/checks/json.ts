/**
 * default.jsonSchema (some JSON value in the text is valid against the
 * schema, draft 2020-12) and default.jsonKeys (some JSON object in the text
 * has any, all or none of the keys). The JSON is the whole text, else a code
 * fence's body, else a balanced `{…}` (found.ts); the first value that
 * passes wins, else the first found is reported. No JSON fails.
 */
import type { ValidateFunction } from 'ajv';
import { compileCallerSchema, jsonObject, optional } from '../../shared/json-schema.js';
import { judged, needText, type CheckDefinition } from '../check.js';
import { jsonValues } from './found.js';
import { holdsFor, operator, strings, type Operator } from './words.js';

/** Validation errors reported, at most. */
const MAX_ERRORS = 10;

export const jsonSchema: CheckDefinition<{ validate: ValidateFunction }> = {
  hooks: ['before', 'after'],
  parameters: { schema: jsonObject },
  prepare(p) {
    const compiled = compileCallerSchema(p.schema as object);
    return compiled.ok ? { ok: true, value: { validate: compiled.validate } } : { ok: false, problem: { path: ['schema'], message: compiled.message } };
  },
  run(s, p) {
    const values = jsonValues(needText(s));
    if (values.length === 0) return { verdict: false, explanation: 'the text holds no JSON' };
    let errors: unknown[] | null = null;
    for (const v of values) {
      if (p.validate(v)) return judged(true, 'a JSON value in the text is valid against the schema', '');
      errors ??= (p.validate.errors ?? []).slice(0, MAX_ERRORS).map((e) => ({ path: e.instancePath, message: e.message }));
    }
    return { verdict: false, explanation: 'no JSON value in the text is valid against the schema', data: { validationErrors: errors } };
  },
};

export const jsonKeys: CheckDefinition<{ keys: string[]; operator?: Operator }> = {
  hooks: ['before', 'after'],
  parameters: { keys: strings, ...optional({ operator }) },
  prepare: (p) => ({ ok: true, value: p as { keys: string[]; operator?: Operator } }),
  run(s, p) {
    const op = p.operator ?? 'any';
    const objects = jsonValues(needText(s)).filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v));
    if (objects.length === 0) return { verdict: false, explanation: 'the text holds no JSON object' };
    let best: { present: string[]; holds: boolean } | null = null;
    for (const o of objects) {
      const present = p.keys.filter((k) => Object.hasOwn(o, k));
      const holds = holdsFor(op, present.length, p.keys.length - present.length);
      if (holds) return judged(true, `a JSON object in the text has '${op}' of the keys`, '', { operator: op, presentKeys: present });
      if (best === null || present.length > best.present.length) best = { present, holds };
    }
    return judged(false, '', `no JSON object in the text has '${op}' of the keys`, { operator: op, presentKeys: best!.present });
  },
};
