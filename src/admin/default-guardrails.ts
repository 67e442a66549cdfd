/**
 * Default guardrails (Portkey's organisation and workspace guardrails): the
 * settings `default_input_guardrails` and `default_output_guardrails` name
 * saved guardrails, by id or slug, run on every request of the organisation
 * (PUT /v1/organisation/settings: the organisation's own guardrails) or of
 * one workspace (PUT /v1/workspaces/:id `settings`: its guardrails or the
 * organisation's), the workspace's after the organisation's. Each is checked
 * to exist, be active and have only checks that run on its side when set,
 * and stored by id.
 */
import type { SchemaObject } from 'ajv';
import { compileGuardrail, sidesOf } from '../guardrails/hooks.js';
import { err, invalid, ok, type Result } from '../shared/errors.js';
import { MAX_PATTERN_WEIGHT } from '../shared/linear-regex.js';
import { DEFAULT_GUARDRAIL_KEYS, type DefaultGuardrailKey } from '../store/settings.js';
import type { Store } from '../store/store.js';
import { S } from './input.js';

/** Every one runs on every request: a short list. */
const MAX_DEFAULT_GUARDRAILS = 16;

export const DEFAULT_GUARDRAILS_SCHEMA: SchemaObject = { type: 'array', maxItems: MAX_DEFAULT_GUARDRAILS, items: S.ref };

export type DefaultGuardrailsPatch<V = string[]> = Partial<Record<DefaultGuardrailKey, V>>;

/**
 * The patch with each named guardrail's id in place of the reference, once
 * each, in order; a 400 naming the item (`default_input_guardrails[1]`,
 * after `at`, where the patch sits in the body) when it names no guardrail
 * `workspaceId` can use (null: the organisation's), or an archived one.
 * Values other than lists (null: remove) pass unchanged.
 */
export async function resolveDefaultGuardrails<T extends DefaultGuardrailsPatch<string[] | null>>(
  store: Store,
  patch: T,
  workspaceId: string | null,
  at = '',
): Promise<Result<T>> {
  const out: T = { ...patch };
  for (const key of DEFAULT_GUARDRAIL_KEYS) {
    const refs = patch[key];
    if (refs === undefined || refs === null) continue;
    const ids: string[] = [];
    for (const [i, ref] of refs.entries()) {
      const param = `${at}${key}[${i}]`;
      const g = await store.guardrails.findFor(ref, workspaceId);
      if (g === null) {
        const among = workspaceId === null ? "the organisation's guardrails" : "this workspace's or the organisation's guardrails";
        return err(invalid(`${param}: '${ref}' is none of ${among}`, param));
      }
      if (g.status === 'archived') return err(invalid(`${param}: guardrail '${g.slug}' is archived`, param));
      // Checked as the request path will: a check of the other side only would make every request of the workspace a 500.
      const hook = compileGuardrail(g, { left: MAX_PATTERN_WEIGHT });
      const side = key === 'default_input_guardrails' ? 'before' : 'after';
      if (!hook.ok || !sidesOf(hook.value).includes(side)) {
        return err(invalid(`${param}: guardrail '${g.slug}' has a check that does not run ${side} the request`, param));
      }
      if (!ids.includes(g.id)) ids.push(g.id);
    }
    out[key] = ids as T[typeof key];
  }
  return ok(out);
}
