/**
 * Admit: the request's x-gateway-* headers, with the key's own metadata
 * (`defaults.metadata`) over the caller's, then its rate limits — before the
 * body is read, so a client over its limit costs no upload and no provider
 * call. (The key and its scope were checked by the HTTP layer.)
 */
import { parseGatewayHeaders } from '../http/headers.js';
import type { Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import { keyMetadata, type Admission, type RequestLimits } from './limits.js';

export function admit(limits: RequestLimits): Stage {
  return {
    name: 'admit',
    run(ctx) {
      const gh = parseGatewayHeaders(ctx.req.headers, ctx.req.rawHeaders);
      if (!gh.ok) return ctx.refuse(gh.error);
      const metadata = (gh.value.metadata = withKeyMetadata(gh.value.metadata, ctx.key));
      ctx.gateway = gh.value;
      const admitted = limits.admit(ctx.req.method!, ctx.pathname, ctx.key, metadata);
      return admitted instanceof Promise ? admitted.then((a) => admittedAs(ctx, a)) : admittedAs(ctx, admitted);
    },
  };
}

function admittedAs(ctx: RequestContext, a: Result<Admission>): Outcome {
  if (!a.ok) return ctx.refuse(a.error);
  ctx.admission = a.value;
  return 'next';
}

/**
 * The request's metadata: the key's `defaults.metadata` merged over the
 * caller's, so a caller cannot change what the key's owner set (rate limits
 * grouped by it, logs); no copy when only one side has any.
 */
function withKeyMetadata(caller: Readonly<Record<string, string>>, key: ApiKeyRecord): Readonly<Record<string, string>> {
  const own = keyMetadata(key);
  if (own === undefined) return caller;
  return hasKeys(caller) ? { ...caller, ...own } : own;
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}
