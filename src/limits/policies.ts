/**
 * Which rate-limit or usage-limit policies a request falls under, and which of each
 * policy's counters it counts in. A policy applies when every condition
 * matches (`*` matches any value the request has); its counter is chosen by
 * the request's values of the group_by keys. A request without a metadata
 * key it is grouped by counts in the group of requests without it, so
 * leaving metadata out never escapes a limit. A caller sets its metadata,
 * so it could dodge a limit grouped by it with a new value per request;
 * a `trusted` entry reads the key's own defaults.metadata instead.
 */
import type { PolicyCondition, PolicyGroupBy, PolicyKey, PolicyStatus } from '../store/policies.js';
import type { EndpointType } from './endpoint-types.js';

/** What a policy can match and group a request by. */
export interface RequestFacts {
  workspaceId: string;
  apiKeyId: string;
  endpointType: EndpointType;
  /** The request's metadata: the caller's x-gateway-metadata with the key's defaults.metadata over it. */
  metadata: Readonly<Record<string, string>>;
  /** The key's defaults.metadata alone: what `trusted` entries read. */
  keyMetadata: Readonly<Record<string, string>>;
}

const METADATA = 'metadata.';

function valueOf({ key, trusted }: PolicyKey, r: RequestFacts): string | undefined {
  switch (key) {
    case 'workspace_id':
      return r.workspaceId;
    case 'api_key':
      return r.apiKeyId;
    case 'endpoint_type':
      return r.endpointType;
    default:
      return key.startsWith(METADATA) ? (trusted === true ? r.keyMetadata : r.metadata)[key.slice(METADATA.length)] : undefined;
  }
}

function matches(c: PolicyCondition, r: RequestFacts): boolean {
  const v = valueOf(c, r);
  return v !== undefined && (c.value === '*' || c.value === v);
}

/** What matching needs of a policy: rate-limit and usage-limit policies share it. */
export interface MatchedPolicy {
  id: string;
  workspaceId: string;
  status: PolicyStatus;
  type: string;
  conditions: readonly PolicyCondition[];
  groupBy: readonly PolicyGroupBy[];
}

export function applies(p: MatchedPolicy, r: RequestFacts): boolean {
  if (p.status !== 'active' || p.workspaceId !== r.workspaceId) return false;
  for (const c of p.conditions) if (!matches(c, r)) return false;
  return true;
}

/**
 * What tells this request's counter of `p` from the policy's other counters,
 * with nothing built when the policy groups by one key (the common case): the
 * request's value of it ('' without one, as in counterKey); else the escaped
 * values joined. Only comparable between requests of the same policy.
 */
export function groupOf(p: MatchedPolicy, r: RequestFacts): string {
  return p.groupBy.length === 1 ? (valueOf(p.groupBy[0]!, r) ?? '') : p.groupBy.map((g) => part(g, r)).join('/');
}

function part(g: PolicyGroupBy, r: RequestFacts): string {
  return encodeURIComponent(valueOf(g, r) ?? '');
}

/**
 * The counter of `p` this request counts in: the policy, its type (a policy
 * switched from requests to tokens starts afresh) and the group's values,
 * each escaped so that no two groups share a key.
 */
export function counterKey(p: MatchedPolicy, r: RequestFacts): string {
  const group = p.groupBy.length === 1 ? part(p.groupBy[0]!, r) : groupOf(p, r);
  return `${p.id}:${p.type}:${group}`;
}
