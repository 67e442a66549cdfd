/**
 * Admit: the request's x-gateway-* headers, then its rate limits — before
 * the body is read, so a client over its limit costs no upload and no
 * provider call. (The key and its scope were checked by the HTTP layer.)
 */
import { parseGatewayHeaders } from '../http/headers.js';
import type { Result } from '../shared/errors.js';
import type { Outcome, RequestContext, Stage } from './context.js';
import type { Admission, RequestLimits } from './limits.js';

export function admit(limits: RequestLimits): Stage {
  return {
    name: 'admit',
    run(ctx) {
      const gh = parseGatewayHeaders(ctx.req.headers, ctx.req.rawHeaders);
      if (!gh.ok) return ctx.refuse(gh.error);
      ctx.gateway = gh.value;
      const admitted = limits.admit(ctx.req.method!, ctx.pathname, ctx.key, gh.value.metadata);
      return admitted instanceof Promise ? admitted.then((a) => admittedAs(ctx, a)) : admittedAs(ctx, admitted);
    },
  };
}

function admittedAs(ctx: RequestContext, a: Result<Admission>): Outcome {
  if (!a.ok) return ctx.refuse(a.error);
  ctx.admission = a.value;
  return 'next';
}
