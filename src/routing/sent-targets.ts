/**
 * Before a plan is walked, what each of its targets would send: the body
 * after the target's param edits (so the model `override_params` puts there)
 * and the price of that model where it goes — a stored credential's own
 * price for it first, else the catalog's at the target's provider, else (no
 * provider known yet) the dearest provider offering that model id. Budgets
 * reserve for the dearest target, since any of them may answer.
 */
import { dearestPrice, type Price } from '../catalog/price.js';
import { credentialRef, sentPrice, type CredentialSource } from './credentials.js';
import { applyParamEdits } from './params.js';
import type { Plan, PlanLeaf, PlanNode } from './plan.js';

export interface SentTarget {
  /** The JSON body as this target would send it; null when the request has none. */
  body: Record<string, unknown> | null;
  model: string | undefined;
  /** null: nobody prices `model` where it goes (or no model is named). */
  price: Price | null;
}

/** Who the request is: where its stored credentials are looked up, and the provider its headers name. */
export interface SentFrom {
  workspaceId: string;
  provider: string | undefined;
  virtualKey: string | undefined;
}

export async function sentTargets(plan: Plan, body: Record<string, unknown> | null, from: SentFrom, credentials: CredentialSource): Promise<SentTarget[]> {
  const out: SentTarget[] = [];
  for (const leaf of leaves(plan.root)) {
    const sent = body !== null && leaf.edits !== null ? applyParamEdits(body, leaf.edits) : body;
    const model = typeof sent?.model === 'string' ? sent.model : undefined;
    out.push({ body: sent, model, price: model === undefined ? null : await priceAt(leaf, model, from, credentials) });
  }
  return out;
}

async function priceAt(leaf: PlanLeaf, model: string, from: SentFrom, credentials: CredentialSource): Promise<Price | null> {
  const ref = credentialRef(leaf.node, leaf.path, from.virtualKey, from.provider);
  if (ref !== null) {
    const found = await credentials.resolve(from.workspaceId, ref.kind, ref.ref);
    // An unknown credential is refused when the target is tried; meanwhile the model is priced as if at any provider.
    if (found.ok && found.value !== null) return sentPrice(found.value.provider, model, found.value);
  }
  const provider = leaf.node.provider ?? from.provider;
  return provider === undefined || provider.startsWith('@') ? dearestPrice(model) : sentPrice(provider, model, null);
}

function* leaves(node: PlanNode): Generator<PlanLeaf> {
  if (node.kind === 'leaf') yield node;
  else for (const t of node.targets) yield* leaves(t);
}
