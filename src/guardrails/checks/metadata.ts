/**
 * Checks on the request's metadata (x-gateway-metadata), before the request:
 * default.requiredMetadataKeys (any, all or none of the keys are present;
 * default all) and default.requiredMetadataKeyPairs (any, all or none of the
 * pairs match; default all). A pair matches by `matchType`: `exact` (the
 * default) the value is the same; `contains` the value contains it;
 * `containsAll` the value contains each of its comma-separated items;
 * `regex` the value matches it (RE2, weighed on the config's budget).
 */
import { Type } from '@sinclair/typebox';
import type RE2 from 're2';
import { enumOf, optional, str } from '../../shared/json-schema.js';
import { chargedRegex } from '../../shared/linear-regex.js';
import { asIs, judged, type CheckDefinition } from '../check.js';
import { holdsFor, operator, strings, type Operator } from './words.js';

const allByDefault = (op: Operator | undefined): Operator => op ?? 'all';

export const requiredMetadataKeys: CheckDefinition<{ metadataKeys: string[]; operator?: Operator }> = {
  hooks: ['before'],
  parameters: { metadataKeys: strings, ...optional({ operator }) },
  prepare: asIs,
  run(s, p) {
    const op = allByDefault(p.operator);
    const found = p.metadataKeys.filter((k) => Object.hasOwn(s.metadata, k));
    const missing = p.metadataKeys.filter((k) => !Object.hasOwn(s.metadata, k));
    return judged(holdsFor(op, found.length, missing.length), `'${op}' of the metadata keys holds`, `'${op}' of the metadata keys does not hold`, {
      operator: op,
      foundMetadataKeys: found,
      missingMetadataKeys: missing,
    });
  },
};

type MatchType = 'exact' | 'contains' | 'containsAll' | 'regex';

interface Pairs {
  pairs: [string, (value: string) => boolean][];
  operator: Operator;
  matchType: MatchType;
}

export const requiredMetadataKeyPairs: CheckDefinition<Pairs> = {
  hooks: ['before'],
  parameters: {
    metadataPairs: Type.Record(Type.String(), str, { minProperties: 1, message: 'must be a non-empty object of metadata keys to string values' }),
    ...optional({ operator, matchType: enumOf<MatchType>(['exact', 'contains', 'containsAll', 'regex'], 'one of exact, contains, containsAll, regex') }),
  },
  prepare(p, budget) {
    const matchType = (p.matchType as MatchType | undefined) ?? 'exact';
    const pairs: Pairs['pairs'] = [];
    for (const [key, expected] of Object.entries(p.metadataPairs as Record<string, string>)) {
      if (matchType === 'regex') {
        const re = chargedRegex(expected, budget);
        if (!re.ok) return { ok: false, problem: { path: ['metadataPairs', key], message: re.message } };
        const compiled: RE2 = re.re;
        pairs.push([key, (v) => compiled.test(v)]);
      } else if (matchType === 'containsAll') {
        const items = expected.split(',').map((i) => i.trim()).filter((i) => i !== '');
        pairs.push([key, (v) => items.every((i) => v.includes(i))]);
      } else pairs.push([key, matchType === 'contains' ? (v) => v.includes(expected) : (v) => v === expected]);
    }
    return { ok: true, value: { pairs, operator: allByDefault(p.operator as Operator | undefined), matchType } };
  },
  run(s, p) {
    const matched = p.pairs.filter(([key, matches]) => Object.hasOwn(s.metadata, key) && matches(s.metadata[key]!)).map(([key]) => key);
    const unmatched = p.pairs.map(([key]) => key).filter((k) => !matched.includes(k));
    const op = p.operator;
    return judged(holdsFor(op, matched.length, unmatched.length), `'${op}' of the metadata pairs match (${p.matchType})`, `'${op}' of the metadata pairs do not match (${p.matchType})`, {
      operator: op,
      matchType: p.matchType,
      matchedKeys: matched,
      unmatchedKeys: unmatched,
    });
  },
};
