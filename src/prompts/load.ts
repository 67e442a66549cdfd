/**
 * A prompt as a render or a run needs it: the prompt named by `ref` in a
 * workspace, the version the ref pins (`slug@3`, `slug@latest`,
 * `slug@production`; the default version without one), and every partial
 * its template reaches, each at its pinned or default version, read from
 * the store and checked (render.ts prepare). Partials are found among the
 * prompt's workspace's partials, by slug or id.
 */
import { err, GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import type { Prompt, PromptKind, PromptRepo, PromptVersion } from '../store/prompts.js';
import { missingPartial, parse, partialNames, prepare, type Prepared } from './render.js';

/** A template may reach this many partials in all: more is a mistake, and each is a read. */
export const MAX_PARTIALS = 64;

export interface LoadedPrompt {
  prompt: Prompt;
  version: PromptVersion;
  prepared: Prepared;
}

/** `ref` split at its last `@`: the object and the version it pins (null: the default). */
export function splitRef(ref: string): { ref: string; version: string | null } {
  const at = ref.lastIndexOf('@');
  return at <= 0 ? { ref, version: null } : { ref: ref.slice(0, at), version: ref.slice(at + 1) };
}

/** The version of `p` that `pin` names (null: its default); null when there is none. */
export async function pinnedVersion(repo: PromptRepo, p: Prompt & { version: PromptVersion }, pin: string | null): Promise<PromptVersion | null> {
  return pin === null ? p.version : repo.version(p.id, pin);
}

/**
 * The prompt `ref` of `workspaceId` ready to render; null when no prompt is
 * so named (the caller says 404 or 400). 400s: a version the ref names
 * that does not exist, an archived prompt, a partial missing or in a cycle.
 */
export async function loadPrompt(repo: PromptRepo, workspaceId: string, ref: string): Promise<Result<LoadedPrompt | null>> {
  const named = splitRef(ref);
  const p = await repo.find('prompt', workspaceId, named.ref);
  if (p === null) return ok(null);
  if (p.status === 'archived') return err(invalid(`prompt '${p.slug}' is archived`, 'prompt_id', 'archived_prompt'));
  const version = await pinnedVersion(repo, p, named.version);
  if (version === null) return err(new GatewayError(404, `prompt '${p.slug}' has no version '${named.version}'`, { code: 'not_found', param: 'prompt_id' }));
  const prepared = await prepareWithPartials(repo, workspaceId, version.template);
  return prepared.ok ? ok({ prompt: p, version, prepared: prepared.value }) : prepared;
}

/** A template with every partial it reaches, read breadth-first (a cycle ends: a name is read once). */
export async function prepareWithPartials(repo: PromptRepo, workspaceId: string, template: string): Promise<Result<Prepared>> {
  const root = parse(template, 'string');
  if (!root.ok) return root;
  const partials = new Map<string, string>();
  let wanted = [...partialNames(root.value)];
  while (wanted.length > 0) {
    const next: string[] = [];
    for (const name of wanted) {
      if (partials.has(name)) continue;
      if (partials.size >= MAX_PARTIALS) return err(invalid(`string: a template may reach at most ${MAX_PARTIALS} partials`, 'string', 'too_many_partials'));
      const text = await partialText(repo, workspaceId, name);
      if (text === null) return err(missingPartial(name));
      partials.set(name, text);
      const tokens = parse(text, `partial '${name}'`);
      if (!tokens.ok) return tokens;
      next.push(...partialNames(tokens.value));
    }
    wanted = next;
  }
  return prepare(template, partials);
}

async function partialText(repo: PromptRepo, workspaceId: string, name: string): Promise<string | null> {
  const named = splitRef(name);
  const kind: PromptKind = 'partial';
  const p = await repo.find(kind, workspaceId, named.ref);
  if (p === null || p.status === 'archived') return null;
  return (await pinnedVersion(repo, p, named.version))?.template ?? null;
}
