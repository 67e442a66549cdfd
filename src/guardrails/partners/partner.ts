/**
 * Third-party guardrails: a partner's checks, named `<partner>.<check>` in
 * configs, one file per partner. Every partner check takes `apiDomain`
 * (required: the partner API's host, `https://` unless a scheme is given),
 * `credential` (required: a stored credential of the workspace, a virtual
 * key's id or slug, or `@slug` of an integration's provider), `timeout` (ms,
 * default 10 000); and a guardrail holding one denies unless it says
 * `deny: false`.
 *
 * The credential's key is sent only to the host stored with it (its
 * custom_host, else the partner's own API): an `apiDomain` elsewhere is an
 * error, never a call, so a config cannot hand a stored key to another host.
 */
import type { TProperties } from '@sinclair/typebox';
import { int, nonEmptyStr, optional } from '../../shared/json-schema.js';
import { upstreamUrlProblem } from '../../shared/upstream-url.js';
import type { CheckDefinition, HookKind, ParamProblem, Subject, Verdict } from '../check.js';
import { originOf } from '../outbound.js';

const DEFAULT_TIMEOUT_MS = 10_000;

/** What a partner check calls with: the API's base URL (no trailing slash), the stored key, the wait. */
export interface PartnerCall {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

export interface PartnerCheck<P> {
  readonly hooks: readonly HookKind[];
  /** Its own parameters, besides the common ones. */
  readonly parameters: TProperties;
  run(subject: Subject, parameters: P, call: PartnerCall): Promise<Verdict>;
}

export interface Partner {
  /** The prefix of its check ids. */
  readonly name: string;
  /** The provider a stored credential for it must be for. */
  readonly provider: string;
  /** The partner's own API, where a credential without custom_host may be sent. */
  readonly host: string;
  readonly checks: Readonly<Record<string, PartnerCheck<any>>>;
}

interface Common {
  baseUrl: string;
  credential: { kind: 'virtual_key' | 'provider'; ref: string };
  timeoutMs: number;
}

/** A partner's checks by their config ids. */
export function partnerChecks(partner: Partner): Record<string, CheckDefinition<unknown>> {
  const out: Record<string, CheckDefinition<unknown>> = {};
  for (const [name, check] of Object.entries(partner.checks)) {
    const definition: CheckDefinition<Common & Record<string, unknown>> = {
      hooks: check.hooks,
      denies: true,
      parameters: { apiDomain: nonEmptyStr, credential: nonEmptyStr, ...optional({ timeout: int(1, 600_000) }), ...check.parameters },
      prepare(p) {
        const apiDomain = p.apiDomain as string;
        const baseUrl = (/^[a-z][a-z0-9+.-]*:\/\//i.test(apiDomain) ? apiDomain : `https://${apiDomain}`).replace(/\/+$/, '');
        const bad = upstreamUrlProblem(baseUrl);
        if (bad !== null) return { ok: false, problem: { path: ['apiDomain'], message: bad } as ParamProblem };
        const ref = p.credential as string;
        const credential = ref.startsWith('@') ? { kind: 'provider' as const, ref: ref.slice(1) } : { kind: 'virtual_key' as const, ref };
        return { ok: true, value: { ...p, baseUrl, credential, timeoutMs: (p.timeout as number | undefined) ?? DEFAULT_TIMEOUT_MS } };
      },
      async run(s, p) {
        return check.run(s, p, { baseUrl: p.baseUrl, apiKey: await keyFor(partner, s, p), timeoutMs: p.timeoutMs });
      },
    };
    out[`${partner.name}.${name}`] = definition as CheckDefinition<unknown>;
  }
  return out;
}

/** The stored key, once it is known to be for this partner and stored for the host apiDomain names. */
async function keyFor(partner: Partner, s: Subject, p: Common): Promise<string> {
  const ref = `${p.credential.kind === 'provider' ? '@' : ''}${p.credential.ref}`;
  const found = await s.reach.credential(p.credential.kind, p.credential.ref);
  if (!found.ok) throw new Error(`credential '${ref}': ${found.error.message}`);
  if (found.value === null) throw new Error(`credential '${ref}' is not one of this workspace`);
  const { provider, fields } = found.value;
  if (provider !== partner.provider) throw new Error(`credential '${ref}' is for ${provider}, not ${partner.provider}`);
  const stored = originOf(typeof fields.custom_host === 'string' ? fields.custom_host : partner.host);
  if (originOf(p.baseUrl) !== stored) throw new Error(`credential '${ref}' is sent only to ${stored}, where it is stored; apiDomain names ${originOf(p.baseUrl)}`);
  if (typeof fields.api_key !== 'string' || fields.api_key === '') throw new Error(`credential '${ref}' holds no API key`);
  return fields.api_key;
}
