/**
 * Credential: the stored credential a single-target plan names (a target's
 * virtual_key or `@slug` provider, else x-gateway-virtual-key or an `@slug`
 * x-gateway-provider) looked up before the body is read. One that does not
 * exist in the key's workspace, or an integration not enabled for it, is
 * refused here as the route stage would refuse it, without first reading a
 * body of up to GATEWAY_MAX_BODY_BYTES. A plan of several targets is left to
 * the router: another target may still answer. The lookup is the route
 * stage's own (the credential cache), so it costs that stage nothing more.
 */
import { credentialRef, unknownCredential, type CredentialRef, type CredentialSource, type StoredCredential } from '../routing/credentials.js';
import type { Result } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import type { Outcome, RequestContext, Stage } from './context.js';

export function credential(credentials: CredentialSource): Stage {
  return {
    name: 'credential',
    run(ctx) {
      const root = ctx.plan!.root;
      if (root.kind !== 'leaf') return 'next';
      const h = ctx.req.headers;
      const ref = credentialRef(root.node, root.path, single(h['x-gateway-virtual-key']), single(h['x-gateway-provider']));
      if (ref === null) return 'next';
      const found = credentials.resolve(ctx.key.workspaceId, ref.kind, ref.ref);
      return found instanceof Promise ? found.then((f) => checked(ctx, ref, f)) : checked(ctx, ref, found);
    },
  };
}

function checked(ctx: RequestContext, ref: CredentialRef, found: Result<StoredCredential | null>): Outcome {
  if (!found.ok) return ctx.refuse(found.error);
  // Another workspace's credential is unknown here, exactly like one that does not exist (as in the router).
  if (found.value === null) return ctx.refuse(unknownCredential(ref));
  return 'next';
}
