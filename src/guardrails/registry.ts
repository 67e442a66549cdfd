/**
 * The checks by the ids configs name them with: the built-in ones (Portkey's
 * `default.*`) and the third-party guardrails (`<partner>.*`, partners/), each with the validator of its parameters: its own, plus
 * `not` (inverts the verdict) and `failOnError` (a check that errors fails
 * its hook; otherwise an error does not count against it), which every
 * check takes and the engine applies.
 */
import type { ValidateFunction } from 'ajv';
import { ajv, bool, object, optional } from '../shared/json-schema.js';
import { lazy } from '../shared/memo.js';
import type { CheckDefinition } from './check.js';
import { containsCode, validUrls } from './checks/code.js';
import { characterCount, sentenceCount, wordCount } from './checks/counts.js';
import { inlineImageUrls } from './checks/images.js';
import { jsonKeys, jsonSchema } from './checks/json.js';
import { jwt } from './checks/jwt.js';
import { requiredMetadataKeyPairs, requiredMetadataKeys } from './checks/metadata.js';
import { addPrefix } from './checks/prefix.js';
import { regexMatch, regexReplace } from './checks/regex.js';
import { allowedRequestTypes, modelRules, modelWhitelist } from './checks/request.js';
import { log, webhook } from './checks/webhook.js';
import { alllowercase, alluppercase, contains, endsWith, notNull } from './checks/words.js';
import { openai } from './partners/openai.js';
import { partnerChecks } from './partners/partner.js';

// Each definition prepares the parameters its own run takes: erased to one type here, where they are paired.
const DEFINITIONS: Record<string, CheckDefinition<any>> = {
  regexMatch,
  regexReplace,
  contains,
  wordCount,
  sentenceCount,
  characterCount,
  jsonSchema,
  jsonKeys,
  validUrls,
  containsCode,
  alluppercase,
  alllowercase,
  endsWith,
  notNull,
  modelWhitelist,
  // Portkey's manifest spells this one in lower case.
  modelwhitelist: modelWhitelist,
  modelRules,
  allowedRequestTypes,
  requiredMetadataKeys,
  requiredMetadataKeyPairs,
  addPrefix,
  webhook,
  log,
  jwt,
  inlineImageUrls,
};

/** One entry per partner file. */
const PARTNERS = [openai];

export interface Registered {
  definition: CheckDefinition<unknown>;
  /** Compiled when a config or guardrail first names the check: most processes name few of them, or none. */
  validate: () => ValidateFunction;
}

export const CHECKS: ReadonlyMap<string, Registered> = new Map(
  [
    ...Object.entries(DEFINITIONS).map(([name, d]) => [`default.${name}`, d] as const),
    ...PARTNERS.flatMap((p) => Object.entries(partnerChecks(p))),
  ].map(([id, d]) => [
    id,
    {
      definition: d as CheckDefinition<unknown>,
      validate: lazy(() => ajv.compile(object({ ...d.parameters, ...optional({ not: bool, failOnError: bool }) }, 'an object of check parameters'))),
    },
  ]),
);
