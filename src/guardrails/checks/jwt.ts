/**
 * default.jwt, before the request: the token in the client's `headerKey`
 * header (default Authorization, a `Bearer ` prefix dropped) is a JWT
 * signed by a key of the JWKS at `jwksUri`, with an allowed `algorithms`
 * (default: every asymmetric one; never `none` nor an HMAC, which a public
 * JWKS cannot verify), not expired nor before its `nbf` (`clockTolerance`
 * seconds either way, default 5), and issued (`iat`) at most `maxTokenAge`
 * ago (`30s`, `15m`, `12h`, `1d`; default 1d).
 *
 * Verified with node:crypto (a JWK imports as a public key, once per set
 * fetched: an import costs more than the verification). The JWKS is
 * cached per URI for `cacheMaxAge` seconds (default 86400) in a bounded
 * cache; a token naming a key the cached set lacks fetches the set again,
 * at most once per REFETCH_MS (a rotated key is found, a stream of made-up
 * key ids does not become a stream of fetches).
 *
 * No token, a bad one, an unknown key: the check fails. A JWKS that cannot
 * be fetched: it errors.
 */
import crypto, { verify, type KeyObject, constants } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Type } from '@sinclair/typebox';
import { single } from '../../shared/headers.js';
import { enumOf, int, nonEmptyStr, optional } from '../../shared/json-schema.js';
import { upstreamUrlProblem } from '../../shared/upstream-url.js';
import type { CheckDefinition, Verdict } from '../check.js';
import { call, jsonOf, originOf } from '../outbound.js';

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
type Alg = (typeof ALGORITHMS)[number];

const JWKS_TIMEOUT_MS = 5000;
const MAX_JWKS_BYTES = 1024 * 1024;
/** JWKS URIs kept at once: they come from configs, so the cache is bounded. */
const MAX_SETS = 256;
const REFETCH_MS = 10_000;

interface Jwt {
  jwksUri: string;
  headerKey: string;
  cacheMaxAgeMs: number;
  clockToleranceS: number;
  maxTokenAgeS: number;
  algorithms: readonly Alg[];
}

export const jwt: CheckDefinition<Jwt> = {
  hooks: ['before'],
  parameters: {
    jwksUri: nonEmptyStr,
    ...optional({
      headerKey: nonEmptyStr,
      cacheMaxAge: int(1, 30 * 86400),
      clockTolerance: int(0, 86400),
      maxTokenAge: Type.String({ pattern: '^\\d+\\s*(s|m|h|d)$', message: 'must be a duration such as 30s, 15m, 12h or 1d' }),
      algorithms: Type.Array(enumOf<Alg>(ALGORITHMS, `one of ${ALGORITHMS.join(', ')}`), { minItems: 1, message: 'must be a non-empty array of algorithms' }),
    }),
  },
  prepare(p) {
    const bad = upstreamUrlProblem(p.jwksUri as string);
    if (bad !== null) return { ok: false, problem: { path: ['jwksUri'], message: bad } };
    return {
      ok: true,
      value: {
        jwksUri: p.jwksUri as string,
        headerKey: ((p.headerKey as string | undefined) ?? 'authorization').toLowerCase(),
        cacheMaxAgeMs: ((p.cacheMaxAge as number | undefined) ?? 86400) * 1000,
        clockToleranceS: (p.clockTolerance as number | undefined) ?? 5,
        maxTokenAgeS: seconds((p.maxTokenAge as string | undefined) ?? '1d'),
        algorithms: (p.algorithms as Alg[] | undefined) ?? ALGORITHMS,
      },
    };
  },
  async run(s, p): Promise<Verdict> {
    const raw = single(s.reach.headers[p.headerKey]);
    if (raw === undefined || raw.trim() === '') return fail(`the request has no ${p.headerKey} header`);
    const token = raw.replace(/^Bearer\s+/i, '').trim();
    const parts = token.split('.');
    if (parts.length !== 3) return fail('the token is not a JWT (three dot-separated parts)');
    const header = decoded(parts[0]!);
    const claims = decoded(parts[1]!);
    if (header === null || claims === null) return fail('the token header or claims are not base64url JSON');
    const alg = header.alg as Alg;
    if (!p.algorithms.includes(alg)) return fail(`the token's algorithm ${String(header.alg)} is not allowed`);
    if (typeof header.kid !== 'string') return fail('the token names no key (kid)');
    const key = await keyOf(p, header.kid, alg);
    if (key === null) return fail(`no key of the JWKS has kid "${header.kid}" for ${alg}`);
    if (!verify(hashOf(alg), Buffer.from(`${parts[0]}.${parts[1]}`), options(alg, key), Buffer.from(parts[2]!, 'base64url'))) {
      return fail('the token signature does not verify');
    }
    const now = Date.now() / 1000;
    const tolerance = p.clockToleranceS;
    if (claims.exp !== undefined && !(typeof claims.exp === 'number' && now <= claims.exp + tolerance)) return fail('the token has expired');
    if (claims.nbf !== undefined && !(typeof claims.nbf === 'number' && now >= claims.nbf - tolerance)) return fail('the token is not valid yet (nbf)');
    if (typeof claims.iat !== 'number') return fail('the token has no issue time (iat), so its age is unknown');
    if (now - claims.iat > p.maxTokenAgeS + tolerance) return fail('the token is older than maxTokenAge');
    if (claims.iat > now + tolerance) return fail('the token is issued in the future (iat)');
    return { verdict: true, explanation: 'the JWT is valid', data: { alg, kid: header.kid } };
  },
};

function fail(why: string): Verdict {
  return { verdict: false, explanation: `JWT validation failed: ${why}`, data: { reason: why } };
}

function seconds(duration: string): number {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(duration)!;
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

function decoded(part: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function hashOf(alg: Alg): string | null {
  return alg === 'EdDSA' ? null : `sha${alg.slice(2)}`;
}

/** How node:crypto verifies `alg`: RSA-PSS padding, and ECDSA signatures in JOSE's r‖s form. */
function options(alg: Alg, key: KeyObject): Parameters<typeof verify>[2] {
  if (alg.startsWith('PS')) return { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
  if (alg.startsWith('ES')) return { key, dsaEncoding: 'ieee-p1363' };
  return key;
}

/** The key type (and curve) each algorithm needs: a key of another kind is not used, whatever the token says. */
function fits(alg: Alg, key: KeyObject): boolean {
  const type = key.asymmetricKeyType;
  if (alg.startsWith('RS') || alg.startsWith('PS')) return type === 'rsa' || (alg.startsWith('PS') && type === 'rsa-pss');
  if (alg === 'EdDSA') return type === 'ed25519' || type === 'ed448';
  return type === 'ec' && key.asymmetricKeyDetails?.namedCurve === CURVES[alg];
}

const CURVES: Readonly<Record<string, string>> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

interface KeySet {
  /** By kid, the first key with each (as a search of the array would find). */
  byKid: ReadonlyMap<unknown, Record<string, unknown>>;
  fetchedAt: number;
  /** Keys imported so far, by algorithm and kid (null: unusable for it); at most the set's keys times ALGORITHMS. */
  imported: Map<string, KeyObject | null>;
}

const sets = new LRUCache<string, KeySet>({ max: MAX_SETS, ttl: 86400_000 });
const fetching = new Map<string, Promise<KeySet>>();

async function keyOf(p: Jwt, kid: string, alg: Alg): Promise<KeyObject | null> {
  let set = sets.get(p.jwksUri);
  if (set === undefined) set = await fetchSet(p);
  let key = find(set, kid, alg);
  if (key === null && Date.now() - set.fetchedAt >= REFETCH_MS) key = find(await fetchSet(p), kid, alg);
  return key;
}

function find(set: KeySet, kid: string, alg: Alg): KeyObject | null {
  const jwk = set.byKid.get(kid);
  if (jwk === undefined) return null;
  const id = `${alg} ${kid}`;
  let key = set.imported.get(id);
  if (key === undefined) set.imported.set(id, (key = imported(jwk, alg)));
  return key;
}

function imported(jwk: Record<string, unknown>, alg: Alg): KeyObject | null {
  if ((jwk.alg !== undefined && jwk.alg !== alg) || (jwk.use !== undefined && jwk.use !== 'sig')) return null;
  let key: KeyObject;
  try {
    key = crypto.createPublicKey({ key: jwk as never, format: 'jwk' });
  } catch {
    return null;
  }
  return fits(alg, key) ? key : null;
}

/** The set at the URI, one fetch at a time per URI. */
function fetchSet(p: Jwt): Promise<KeySet> {
  let pending = fetching.get(p.jwksUri);
  if (pending === undefined) {
    pending = (async () => {
      const where = `the JWKS at ${originOf(p.jwksUri)}`;
      const body = jsonOf(await call({ url: p.jwksUri, method: 'GET', headers: { accept: 'application/json' }, timeoutMs: JWKS_TIMEOUT_MS, maxBytes: MAX_JWKS_BYTES }), where);
      if (!Array.isArray(body.keys)) throw new Error(`${where} has no keys array`);
      const byKid = new Map<unknown, Record<string, unknown>>();
      for (const k of body.keys) if (typeof k === 'object' && k !== null && !byKid.has(k.kid)) byKid.set(k.kid, k);
      const set: KeySet = { byKid, fetchedAt: Date.now(), imported: new Map() };
      sets.set(p.jwksUri, set, { ttl: p.cacheMaxAgeMs });
      return set;
    })();
    fetching.set(p.jwksUri, pending);
    void pending.then(
      () => fetching.delete(p.jwksUri),
      () => fetching.delete(p.jwksUri),
    );
  }
  return pending;
}
