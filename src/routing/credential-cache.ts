/**
 * The credential cache in front of the store: a virtual key or `@slug`
 * provider of a workspace → its decrypted credentials, read and decrypted
 * once, then served synchronously from memory (as http/auth.ts serves keys).
 * Entries live 30 s; writes drop them at once through change notices
 * (virtual_key, integration, all). A lookup that started before a change
 * is not cached, so it cannot put back what the change removed.
 * Decrypted credentials exist only here and in the targets built from them.
 */
import type { CredentialKind, CredentialSource, ModelRule, StoredCredential } from './credentials.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { Integration, IntegrationModel } from '../store/integrations.js';
import { customPricing } from '../catalog/price.js';
import type { Secrets } from '../store/secrets.js';
import type { Store } from '../store/store.js';
import type { VirtualKey } from '../store/virtual-keys.js';

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;

type Answer = Result<StoredCredential | null>;

interface Entry {
  answer: Answer;
  at: number;
  /** What the answer depends on, for dropping it on a change notice. */
  id: string | null;
  integrationId: string | null;
}

export class CredentialCache implements CredentialSource {
  private readonly cache = new Map<string, Entry>();
  /** Lookups under way: concurrent misses of one reference share one read and one decryption. */
  private readonly pending = new Map<string, Promise<Answer>>();
  /** Bumped by every change notice: lookups in flight across a change are answered but not kept. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly secrets: Secrets,
    private readonly clock: () => number = Date.now,
    /** Told when a stored blob does not decrypt (with the row's id only; never a secret). */
    private readonly onUnreadable: (what: string, id: string) => void = () => {},
    private readonly max = CACHE_MAX,
  ) {
    store.changes.subscribe((c) => {
      this.generation++;
      // Lookups that began before the change may have read the old rows: later callers start their own.
      this.pending.clear();
      if (c.kind === 'all') this.cache.clear();
      else if (c.kind === 'virtual_key') {
        // A new key may answer a lookup that found nothing before.
        for (const [k, e] of this.cache) if (e.id === c.id || e.id === null) this.cache.delete(k);
      } else if (c.kind === 'integration') {
        for (const [k, e] of this.cache) if (e.integrationId === c.id) this.cache.delete(k);
      }
    });
  }

  resolve(workspaceId: string, kind: CredentialKind, ref: string): Answer | Promise<Answer> {
    const key = `${workspaceId}\n${kind}\n${ref}`;
    const now = this.clock();
    const hit = this.cache.get(key);
    if (hit !== undefined && now - hit.at <= CACHE_TTL_MS) return hit.answer;
    const under = this.pending.get(key);
    if (under !== undefined) return under;
    const generation = this.generation;
    const lookup = this.load(workspaceId, kind, ref)
      .then((entry) => {
        if (generation === this.generation) {
          this.cache.delete(key);
          if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
          this.cache.set(key, { ...entry, at: now });
        }
        return entry.answer;
      })
      .finally(() => {
        if (this.pending.get(key) === lookup) this.pending.delete(key);
      });
    this.pending.set(key, lookup);
    return lookup;
  }

  private async load(workspaceId: string, kind: CredentialKind, ref: string): Promise<Omit<Entry, 'at'>> {
    const vk = await this.store.virtualKeys.find(workspaceId, ref, kind === 'provider');
    if (vk === null) return { answer: { ok: true, value: null }, id: null, integrationId: null };
    const entry = { id: vk.id, integrationId: vk.integrationId };
    if (vk.integrationId === null) {
      const fields = this.open(vk.credentials, vk.id, `virtual key '${vk.slug}'`);
      return { ...entry, answer: fields.ok ? { ok: true, value: credential(vk, fields.value, null, []) } : fields };
    }
    const integration = await this.store.integrations.get(vk.integrationId);
    // Deleted meanwhile: its providers went with it.
    if (integration === null) return { answer: { ok: true, value: null }, id: null, integrationId: null };
    if (!(await this.store.integrations.usableBy(integration, workspaceId))) {
      const error = new GatewayError(403, `integration '${integration.slug}' of provider '${vk.slug}' is not enabled for this workspace`, {
        code: 'integration_not_enabled',
      });
      return { ...entry, answer: { ok: false, error } };
    }
    const fields = this.open(integration.credentials, integration.id, `integration '${integration.slug}'`);
    if (!fields.ok) return { ...entry, answer: fields };
    const unmapped = unresolvedMapping(integration, fields.value);
    if (unmapped !== null) return { ...entry, answer: { ok: false, error: unmapped } };
    const models = await this.store.integrations.models(integration.id);
    return { ...entry, answer: { ok: true, value: credential(vk, fields.value, integration, models) } };
  }

  /** A stored blob's target keys; a blob that does not decrypt (wrong key, moved between rows) is a 500 naming only the object. */
  private open(blob: string | null, id: string, what: string): Result<Record<string, unknown>> {
    if (blob === null) return { ok: true, value: {} };
    try {
      return { ok: true, value: JSON.parse(this.secrets.decrypt(blob, id)) as Record<string, unknown> };
    } catch {
      this.onUnreadable(what, id);
      return {
        ok: false,
        error: new GatewayError(500, `the stored credentials of ${what} cannot be decrypted`, { code: 'credentials_unreadable' }),
      };
    }
  }
}

function credential(
  vk: VirtualKey,
  fields: Record<string, unknown>,
  integration: Integration | null,
  models: readonly IntegrationModel[],
): StoredCredential {
  return Object.freeze({
    id: vk.id,
    slug: vk.slug,
    integrationId: vk.integrationId,
    provider: vk.provider,
    fields: Object.freeze(fields),
    allowAllModels: integration?.allowAllModels ?? true,
    models: new Map<string, ModelRule>(models.map((m) => [m.slug, modelRule(m)])),
    pricingMultiplier: integration?.pricingAdjustments?.multiplier ?? 1,
  });
}

function modelRule(m: IntegrationModel): ModelRule {
  // Checked when written (admin/integration-models.ts); a row that no longer reads as a price prices nothing.
  const pricing = m.pricingConfig === null ? null : customPricing(m.pricingConfig, 'pricing_config');
  return { enabled: m.enabled, customHost: m.configurations?.custom_host, pricing: typeof pricing === 'string' ? null : pricing };
}

/**
 * Secret mappings name values held by secret references, which this gateway
 * cannot read yet: a mapped field the integration does not also store is a
 * clear 400, not a provider's 401.
 */
function unresolvedMapping(i: Integration, fields: Record<string, unknown>): GatewayError | null {
  for (const m of i.secretMappings ?? []) {
    const field = m.target_field === 'key' ? 'api_key' : m.target_field.slice('configurations.'.length);
    if (fields[field] === undefined) {
      return invalid(
        `integration '${i.slug}' takes ${m.target_field} from secret reference '${m.secret_reference_id}', and secret references cannot be resolved by this gateway: store the value on the integration`,
        null,
        'secret_reference_unavailable',
      );
    }
  }
  return null;
}
