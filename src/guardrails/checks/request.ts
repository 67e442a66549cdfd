/**
 * Checks on what the request asks for rather than its text:
 * default.modelWhitelist (the model is one of `models`), default.modelRules
 * (the models the request's metadata allows: `rules.metadata[key][value]`
 * lists, all matching lists together, else `rules.defaults`) and
 * default.allowedRequestTypes (Portkey's request type names; `allowedTypes`
 * and `blockedTypes` as arrays or comma-separated, else the metadata's
 * `supported_endpoints` and `blocked_endpoints`; blocked wins).
 */
import { Type } from '@sinclair/typebox';
import { arrayOf, optional, str } from '../../shared/json-schema.js';
import { asIs, judged, type CheckDefinition, type Subject } from '../check.js';
import { strings } from './words.js';

function modelOf(s: Subject): string {
  if (s.model === undefined || s.model === '') throw new Error('the request names no model');
  return s.model;
}

export const modelWhitelist: CheckDefinition<{ models: string[] }> = {
  hooks: ['before', 'after'],
  parameters: { models: strings },
  prepare: asIs,
  run(s, p) {
    const model = modelOf(s);
    return judged(p.models.includes(model), `model "${model}" is in the list`, `model "${model}" is not in the list`);
  },
};

interface Rules {
  defaults?: string[];
  metadata?: Record<string, Record<string, string[]>>;
}

const modelLists = Type.Record(Type.String(), arrayOf(str, 'an array of model names'), { message: 'must be an object of metadata values to model lists' });

export const modelRules: CheckDefinition<Rules> = {
  hooks: ['before', 'after'],
  parameters: {
    rules: Type.Object(
      optional({
        defaults: arrayOf(str, 'an array of model names'),
        metadata: Type.Record(Type.String(), modelLists, { message: 'must be an object of metadata keys' }),
      }),
      { additionalProperties: false, message: 'must be an object {defaults, metadata}' },
    ),
  },
  prepare(p) {
    const rules = p.rules as Rules;
    const any = (rules.defaults?.length ?? 0) > 0 || Object.values(rules.metadata ?? {}).some((byValue) => Object.values(byValue).some((l) => l.length > 0));
    return any ? { ok: true, value: rules } : { ok: false, problem: { path: ['rules'], message: 'must allow at least one model (defaults or a metadata rule)' } };
  },
  run(s, rules) {
    const model = modelOf(s);
    const allowed = new Set<string>();
    const matched: string[] = [];
    for (const [key, byValue] of Object.entries(rules.metadata ?? {})) {
      const value = s.metadata[key];
      // Own keys only: a caller's value such as `toString` must not find an inherited property (which would error the check, and an errored check passes).
      const models = value !== undefined && Object.hasOwn(byValue, value) ? byValue[value] : undefined;
      if (models === undefined) continue;
      matched.push(`${key}:${value}`);
      for (const m of models) allowed.add(m);
    }
    const list = allowed.size > 0 ? allowed : new Set(rules.defaults ?? []);
    if (list.size === 0) throw new Error('no models are allowed for this request: no rule matched its metadata and there are no defaults');
    return judged(list.has(model), `model "${model}" is allowed by the rules`, `model "${model}" is not allowed by the rules`, {
      matchedRules: matched,
      usingDefaults: allowed.size === 0,
    });
  },
};

/** Portkey's request type names. */
export const REQUEST_TYPES = [
  'complete', 'chatComplete', 'embed', 'rerank', 'moderate', 'stream-complete', 'stream-chatComplete', 'stream-messages', 'proxy',
  'imageGenerate', 'createSpeech', 'createTranscription', 'createTranslation', 'realtime', 'uploadFile', 'listFiles', 'retrieveFile',
  'deleteFile', 'retrieveFileContent', 'createBatch', 'retrieveBatch', 'cancelBatch', 'listBatches', 'getBatchOutput', 'listFinetunes',
  'createFinetune', 'retrieveFinetune', 'cancelFinetune', 'createModelResponse', 'getModelResponse', 'deleteModelResponse',
  'listResponseInputItems', 'messages',
] as const;

const typeList = Type.Union([Type.Array(str), str], { message: 'must be an array of request types or a comma-separated string' });

function listOf(v: unknown): string[] {
  if (Array.isArray(v)) return v as string[];
  return typeof v === 'string' ? v.split(',').map((t) => t.trim()).filter((t) => t !== '') : [];
}

interface Types {
  allowed: string[];
  blocked: string[];
}

export const allowedRequestTypes: CheckDefinition<Types> = {
  hooks: ['before'],
  parameters: optional({ allowedTypes: typeList, blockedTypes: typeList }),
  prepare(p) {
    const t = { allowed: listOf(p.allowedTypes), blocked: listOf(p.blockedTypes) };
    for (const key of ['allowed', 'blocked'] as const) {
      const unknown = t[key].find((x) => !(REQUEST_TYPES as readonly string[]).includes(x));
      if (unknown !== undefined) return { ok: false, problem: { path: [`${key}Types`], message: `names an unknown request type "${unknown}" (known: ${REQUEST_TYPES.join(', ')})` } };
    }
    const both = t.allowed.find((x) => t.blocked.includes(x));
    if (both !== undefined) return { ok: false, problem: { path: ['blockedTypes'], message: `names "${both}", which allowedTypes names too` } };
    return { ok: true, value: t };
  },
  run(s, t) {
    const allowed = t.allowed.length > 0 ? t.allowed : listOf(s.metadata.supported_endpoints);
    const blocked = t.blocked.length > 0 ? t.blocked : listOf(s.metadata.blocked_endpoints);
    const type = s.requestType;
    if (blocked.includes(type)) return judged(false, '', `request type "${type}" is blocked`);
    if (allowed.length > 0 && !allowed.includes(type)) return judged(false, '', `request type "${type}" is not among the allowed: ${allowed.join(', ')}`);
    return judged(true, `request type "${type}" is allowed`, '');
  },
};
