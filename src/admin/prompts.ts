/**
 * /v1/prompts and /v1/prompts/partials: a workspace's prompt templates and
 * the partials they include, both versioned (store/prompts.ts), both made
 * by routesFor(kind) from one table of routes. A version is immutable; a
 * PUT that names version fields appends one, which is published as the
 * default by PUT …/:id/makeDefault and may carry labels (PUT
 * …/:id/labels/:label). `PUT` with `patch: true` takes the version fields
 * it leaves out (`string`, `parameters`, `metadata`, `model`) from the
 * latest version; without it they are replaced (`string` then required).
 * POST /v1/prompts/:id/render answers `{success, data}`, a chat request
 * body (prompts/body.ts); running a prompt is a model endpoint
 * (pipeline/prompt.ts). Found by id anywhere the caller sees, or by slug in
 * the workspace `?workspace_id=` names (else the caller's own); `@version`
 * after either names a version. Access: the key's scopes (prompts.*),
 * then the prompt's `access` roles and the workspace's
 * `membersWritePrompts` (prompts/access.ts).
 */
import { promptDenied, PROMPT_ROLES, writeDenied } from '../prompts/access.js';
import { renderedBody } from '../prompts/body.js';
import { loadPrompt, splitRef } from '../prompts/load.js';
import { parse } from '../prompts/render.js';
import { err, GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import { isUniqueViolation } from '../store/db.js';
import { newSlug } from '../store/ids.js';
import type { Prompt, PromptAccess, PromptAction, PromptKind, PromptStatus, PromptVersion, StoredPrompt, VersionContent } from '../store/prompts.js';
import { byIdOrSlug, canSee, listedWorkspace, notFound, writableWorkspace, type Caller } from './access.js';
import { bodyChecker, idShapedSlug, listReply, reply, S } from './input.js';
import type { BodyChecker } from '../shared/checker.js';
import { route, type AdminDeps, type Route } from './router.js';

interface VersionFields {
  string?: string;
  parameters?: Record<string, unknown>;
  metadata?: Record<string, unknown> | null;
  model?: string | null;
  version_description?: string | null;
}

interface CreateBody extends VersionFields {
  name: string;
  string: string;
  workspace_id?: string;
  slug?: string;
  virtual_key?: string | null;
  config_id?: string | null;
  access?: PromptAccess;
}

interface UpdateBody extends VersionFields {
  name?: string;
  virtual_key?: string | null;
  config_id?: string | null;
  access?: PromptAccess;
  status?: PromptStatus;
  patch?: boolean;
}

/** A 100 KB template is fine; a management body is at most 1 MiB anyway. */
const MAX_TEMPLATE_CHARS = 512 * 1024;
/** Built-in labels; others are custom (slug-shaped). */
const LABEL = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$', description: 'a label: production, staging, development or a custom slug' };

const versionFields = {
  string: { type: 'string', minLength: 1, maxLength: MAX_TEMPLATE_CHARS },
  parameters: { type: 'object' },
  metadata: { type: ['object', 'null'] },
  model: { type: ['string', 'null'], minLength: 1, maxLength: 255 },
  version_description: S.text,
};
const promptFields = {
  virtual_key: { type: ['string', 'null'], minLength: 1, maxLength: 255 },
  config_id: { type: ['string', 'null'], minLength: 1, maxLength: 255 },
  access: {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(['read', 'render', 'run', 'update'].map((a) => [a, { enum: PROMPT_ROLES }])),
  },
};

/** What each kind takes: partials are text alone, prompts also what a render sends and a run uses. */
function checkers(kind: PromptKind): { create: BodyChecker<CreateBody>; update: BodyChecker<UpdateBody> } {
  const own = kind === 'prompt' ? { ...versionFields, ...promptFields } : { string: versionFields.string, version_description: S.text };
  return {
    create: bodyChecker<CreateBody>({
      type: 'object',
      additionalProperties: false,
      required: ['name', 'string'],
      properties: { name: S.name, workspace_id: S.ref, slug: S.slug, ...own },
    }),
    update: bodyChecker<UpdateBody>({
      type: 'object',
      additionalProperties: false,
      properties: { name: S.name, status: { enum: ['active', 'archived'] }, patch: { type: 'boolean' }, ...own },
    }),
  };
}

const OBJECT = { prompt: 'prompt', partial: 'prompt.partial' } as const;

function summary(p: Prompt): Record<string, unknown> {
  return {
    object: OBJECT[p.kind],
    id: p.id,
    slug: p.slug,
    name: p.name,
    workspace_id: p.workspaceId,
    status: p.status,
    ...(p.kind === 'prompt' ? { virtual_key: p.virtualKey, config_id: p.configId, access: p.access } : {}),
    version_id: p.defaultVersionId,
    latest_version: p.latest,
    created_at: p.createdAt,
    last_updated_at: p.lastUpdatedAt,
  };
}

function versionView(kind: PromptKind, v: PromptVersion): Record<string, unknown> {
  return {
    object: `${OBJECT[kind]}.version`,
    id: v.id,
    version_id: v.id,
    [kind === 'prompt' ? 'prompt_id' : 'partial_id']: v.promptId,
    version: v.version,
    string: v.template,
    ...(kind === 'prompt' ? { parameters: v.parameters, metadata: v.metadata, model: v.model } : {}),
    version_description: v.description,
    created_at: v.createdAt,
  };
}

/** A prompt with its default version's content and its labels. */
function view(p: StoredPrompt): Record<string, unknown> {
  const { object: _o, id: _i, version_id: _v, created_at: _c, ...content } = versionView(p.kind, p.version);
  return { ...summary(p), ...content, labels: p.labels };
}

/** The version content a write stores: `patch` fills what the body leaves out from `latest`; else what it leaves out is empty. */
function contentOf(b: VersionFields, latest: PromptVersion | null): Result<VersionContent> {
  const from = latest ?? { template: undefined, parameters: {}, metadata: null, model: null };
  const template = b.string ?? from.template;
  if (template === undefined) return err(invalid("string: required when a new version is made without patch: true", 'string'));
  const syntax = parse(template, 'string');
  if (!syntax.ok) return syntax;
  return ok({
    template,
    parameters: b.parameters ?? (latest === null ? {} : from.parameters),
    metadata: b.metadata === undefined ? (latest === null ? null : from.metadata) : b.metadata,
    model: b.model === undefined ? (latest === null ? null : from.model) : b.model,
    description: b.version_description ?? null,
  });
}

function namesVersion(b: VersionFields): boolean {
  return b.string !== undefined || b.parameters !== undefined || b.metadata !== undefined || b.model !== undefined || b.version_description !== undefined;
}

/** The credential and config a prompt names exist in its workspace (they are used there when it runs). */
async function checkRouting(deps: AdminDeps, workspaceId: string, b: { virtual_key?: string | null; config_id?: string | null }): Promise<GatewayError | null> {
  const vk = b.virtual_key;
  if (typeof vk === 'string') {
    const provider = vk.startsWith('@');
    if ((await deps.store.virtualKeys.find(workspaceId, provider ? vk.slice(1) : vk, provider)) === null) {
      return invalid(`virtual_key: no ${provider ? 'provider' : 'virtual key'} '${vk}' in this workspace`, 'virtual_key', 'unknown_virtual_key');
    }
  }
  if (typeof b.config_id === 'string' && (await deps.store.configs.find(b.config_id, workspaceId)) === null) {
    return invalid(`config_id: no saved config '${b.config_id}' in this workspace`, 'config_id', 'unknown_config');
  }
  return null;
}

function what(kind: PromptKind): string {
  return kind === 'prompt' ? 'prompt' : 'prompt partial';
}

/** The object `ref` (without `@version`) names for the caller; 404 otherwise. */
function visible(deps: AdminDeps, kind: PromptKind, caller: Caller, ref: string, query: URLSearchParams): Promise<Result<StoredPrompt>> {
  const repo = deps.store.prompts;
  return byIdOrSlug(deps.store, caller, ref, query.get('workspace_id'), what(kind), {
    byId: async (id) => {
      const p = await repo.get(id);
      return p?.kind === kind ? p : null;
    },
    bySlug: (ws, slug) => repo.find(kind, ws, slug),
  });
}

/** Visible, and the caller's roles reach the prompt's `access` for `action` (writes: also the workspace's membersWritePrompts). */
async function allowed(deps: AdminDeps, kind: PromptKind, caller: Caller, ref: string, query: URLSearchParams, action: PromptAction): Promise<Result<StoredPrompt>> {
  const p = await visible(deps, kind, caller, ref, query);
  if (!p.ok) return p;
  const denied = promptDenied(p.value, action, caller) ?? (action === 'update' ? await workspaceWriteDenied(deps, caller, p.value.workspaceId) : null);
  return denied === null ? p : err(denied);
}

async function workspaceWriteDenied(deps: AdminDeps, caller: Caller, workspaceId: string): Promise<GatewayError | null> {
  return writeDenied((await deps.store.settings.effective(workspaceId)).security_settings.membersWritePrompts, caller);
}

/** A version of `p` named by number, label, `latest` or id; 404 naming it otherwise. */
async function versionOf(deps: AdminDeps, p: Prompt, ref: string | number): Promise<Result<PromptVersion>> {
  const v = await deps.store.prompts.version(p.id, String(ref));
  return v === null ? err(new GatewayError(404, `${what(p.kind)} '${p.slug}' has no version '${ref}'`, { code: 'not_found', param: 'version' })) : ok(v);
}

const checkVersionRef = bodyChecker<{ version: number | string }>({
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: { version: { type: ['integer', 'string'], minimum: 1, minLength: 1, maxLength: 64 } },
});

function routesFor(kind: PromptKind, base: string): Route[] {
  const check = checkers(kind);
  const noun = kind === 'prompt' ? 'prompt' : 'prompt partial';
  const routes: Route[] = [
    route({
      method: 'POST',
      path: base,
      description: `Creates a ${noun}: its first version (the template in string${kind === 'prompt' ? ', parameters, model, virtual key or config' : ''}).`,
      scope: 'prompts.create',
      body: check.create,
      async handler({ caller, body: b }, deps) {
        const bad = idShapedSlug(b.slug) ?? (kind === 'prompt' && b.slug === 'partials' ? invalid("slug: 'partials' names the partials' routes", 'slug') : null);
        if (bad !== null) return err(bad);
        const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
        if (!ws.ok) return ws;
        const denied = (await workspaceWriteDenied(deps, caller, ws.value.id)) ?? (await checkRouting(deps, ws.value.id, b));
        if (denied !== null) return err(denied);
        const content = contentOf(b, null);
        if (!content.ok) return content;
        const slug = b.slug ?? newSlug(`${kind === 'prompt' ? 'pp' : 'ppt'} ${b.name}`);
        try {
          const p = await deps.store.prompts.create({
            kind,
            workspaceId: ws.value.id,
            slug,
            name: b.name,
            virtualKey: b.virtual_key ?? null,
            configId: b.config_id ?? null,
            access: b.access ?? {},
            content: content.value,
          });
          return reply(201, { object: OBJECT[kind], id: p.id, slug: p.slug, version_id: p.defaultVersionId });
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
          return err(new GatewayError(409, `${what(kind)} slug '${slug}' is taken in this workspace`, { code: 'conflict', param: 'slug' }));
        }
      },
    }),
    route({
      method: 'GET',
      path: base,
      description: `Lists ${noun}s.`,
      scope: 'prompts.list',
      paged: true,
      async handler({ caller, query, page }, deps) {
        const workspaceId = await listedWorkspace(deps.store, caller, query);
        if (!workspaceId.ok) return workspaceId;
        const status = query.get('status');
        if (status !== null && status !== 'active' && status !== 'archived') return err(invalid("status: must be 'active' or 'archived'", 'status'));
        const search = query.get('search') ?? query.get('name') ?? undefined;
        if (search !== undefined && search.length > 255) return err(invalid('search: at most 255 characters', 'search'));
        const found = await deps.store.prompts.list(kind, { workspaceId: workspaceId.value, status: status ?? undefined, search }, page);
        return listReply(found, summary);
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:id`,
      description: `One ${noun} (by id or slug, @version or @label for one version).`,
      scope: 'prompts.read',
      async handler({ caller, params, query }, deps) {
        const named = splitRef(params.id!);
        const p = await allowed(deps, kind, caller, named.ref, query, 'read');
        if (!p.ok || named.version === null) return p.ok ? reply(200, view(p.value)) : p;
        const v = await versionOf(deps, p.value, named.version);
        return v.ok ? reply(200, view({ ...p.value, version: v.value })) : v;
      },
    }),
    route({
      method: 'PUT',
      path: `${base}/:id`,
      description: `Changes a ${noun}: a new version (with patch: missing version fields come from the latest).`,
      scope: 'prompts.update',
      body: check.update,
      async handler({ caller, params, query, body: b }, deps) {
        const p = await allowed(deps, kind, caller, params.id!, query, 'update');
        if (!p.ok) return p;
        const bad = await checkRouting(deps, p.value.workspaceId, b);
        if (bad !== null) return err(bad);
        let content: VersionContent | undefined;
        if (namesVersion(b)) {
          const latest = b.patch === true ? await versionOf(deps, p.value, 'latest') : null;
          if (latest !== null && !latest.ok) return latest;
          const c = contentOf(b, latest?.value ?? null);
          if (!c.ok) return c;
          content = c.value;
        }
        const out = await deps.store.prompts.update(p.value.id, {
          name: b.name,
          virtualKey: b.virtual_key,
          configId: b.config_id,
          access: b.access,
          status: b.status,
          content,
        });
        if (out === null) return err(notFound(what(kind), params.id!));
        return reply(200, out.added === null ? view(out.prompt) : { ...versionView(kind, out.added), slug: out.prompt.slug });
      },
    }),
    route({
      method: 'DELETE',
      path: `${base}/:id`,
      description: `Deletes a ${noun}.`,
      scope: 'prompts.delete',
      async handler({ caller, params, query }, deps) {
        const p = await allowed(deps, kind, caller, params.id!, query, 'update');
        if (!p.ok) return p;
        if (!(await deps.store.prompts.delete(p.value.id))) return err(notFound(what(kind), params.id!));
        return reply(200, { object: OBJECT[kind], id: p.value.id, deleted: true });
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:id/versions`,
      description: `Lists a ${noun}'s versions, newest first.`,
      scope: 'prompts.read',
      paged: true,
      async handler({ caller, params, query, page }, deps) {
        const p = await allowed(deps, kind, caller, params.id!, query, 'read');
        if (!p.ok) return p;
        return listReply(await deps.store.prompts.versions(p.value.id, page), (v) => versionView(kind, v));
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:id/versions/:version`,
      description: `One version of a ${noun}.`,
      scope: 'prompts.read',
      async handler({ caller, params, query }, deps) {
        const p = await allowed(deps, kind, caller, params.id!, query, 'read');
        if (!p.ok) return p;
        const v = await versionOf(deps, p.value, params.version!);
        return v.ok ? reply(200, versionView(kind, v.value)) : v;
      },
    }),
    route({
      method: 'PUT',
      path: `${base}/:id/makeDefault`,
      description: `Makes a version the ${noun}'s default.`,
      scope: 'prompts.update',
      body: checkVersionRef,
      async handler({ caller, params, query, body: b }, deps) {
        const p = await allowed(deps, kind, caller, params.id!, query, 'update');
        if (!p.ok) return p;
        const v = await versionOf(deps, p.value, b.version);
        if (!v.ok) return v;
        if (!(await deps.store.prompts.makeDefault(p.value.id, v.value.id))) return err(notFound(what(kind), params.id!));
        return reply(200, view({ ...p.value, defaultVersionId: v.value.id, version: v.value }));
      },
    }),
    route({
      method: 'PUT',
      path: `${base}/:id/labels/:label`,
      description: `Points a label of the ${noun} at a version.`,
      scope: 'prompts.update',
      body: checkVersionRef,
      async handler({ caller, params, query, body: b }, deps) {
        const label = labelOf(params.label!);
        if (!label.ok) return label;
        const p = await allowed(deps, kind, caller, params.id!, query, 'update');
        if (!p.ok) return p;
        const v = await versionOf(deps, p.value, b.version);
        if (!v.ok) return v;
        await deps.store.prompts.setLabel(p.value.id, label.value, v.value.id);
        return reply(200, { object: `${OBJECT[kind]}.label`, label: label.value, version: v.value.version, version_id: v.value.id });
      },
    }),
    route({
      method: 'DELETE',
      path: `${base}/:id/labels/:label`,
      description: `Removes a label from the ${noun}.`,
      scope: 'prompts.update',
      async handler({ caller, params, query }, deps) {
        const label = labelOf(params.label!);
        if (!label.ok) return label;
        const p = await allowed(deps, kind, caller, params.id!, query, 'update');
        if (!p.ok) return p;
        if (p.value.labels[label.value] === undefined) return err(notFound('label', label.value));
        await deps.store.prompts.setLabel(p.value.id, label.value, null);
        return reply(200, { object: `${OBJECT[kind]}.label`, label: label.value, deleted: true });
      },
    }),
  ];
  return routes;
}

const checkLabel = bodyChecker<{ label: string }>({ type: 'object', properties: { label: LABEL } });

/** A label names a version beside numbers and `latest`: neither shape may be a label. */
function labelOf(raw: string): Result<string> {
  const shaped = checkLabel({ label: raw });
  if (!shaped.ok) return shaped;
  if (/^\d+$/.test(raw) || raw === 'latest') return err(invalid(`label: '${raw}' names a version already (a number or latest)`, 'label'));
  return ok(raw);
}

/** POST /v1/prompts/:id/render: the chat request body the prompt makes with the call's variables and hyperparameters. */
const renderRoute = route({
  method: 'POST',
  path: '/prompts/:id/render',
  description: 'Renders a prompt with variables and hyperparameters into the chat request body it makes.',
  scope: 'prompts.render',
  body: bodyChecker<Record<string, unknown>>({ type: 'object', properties: { variables: { type: ['object', 'null'] }, stream: { type: ['boolean', 'null'] } } }),
  async handler({ caller, params, query, body }, deps) {
    const named = splitRef(params.id!);
    const p = await allowed(deps, 'prompt', caller, named.ref, query, 'render');
    if (!p.ok) return p;
    const loaded = await loadPrompt(deps.store.prompts, p.value.workspaceId, named.version === null ? p.value.id : `${p.value.id}@${named.version}`);
    if (!loaded.ok) return loaded;
    if (loaded.value === null || !canSee(caller, loaded.value.prompt.workspaceId)) return err(notFound('prompt', params.id!));
    const data = renderedBody(loaded.value, body);
    return data.ok ? reply(200, { success: true, data: data.value }) : data;
  },
});

export const promptRoutes: Route[] = [...routesFor('prompt', '/prompts'), ...routesFor('partial', '/prompts/partials'), renderRoute];
