/**
 * Who may act on a prompt beyond the key's scopes (prompts.read, .render,
 * .run, .update…): per prompt, `access` names the lowest workspace role
 * that may read, render, run or update it (unset: any key with the scope); per
 * workspace, the security setting `membersWritePrompts` (organisation
 * default, workspace override) says whether members may create, change and
 * delete its prompts and partials at all, else managers and above. Keys
 * act with their roles (store/roles.ts): service keys as admins, so these
 * rules bind user keys; organisation owners and admins pass them all.
 */
import { GatewayError } from '../shared/errors.js';
import type { Prompt, PromptAction, PromptRole } from '../store/prompts.js';
import { standing, STANDINGS, WORKSPACE_STANDING, type Roles } from '../store/roles.js';

export const PROMPT_ROLES: readonly PromptRole[] = ['member', 'manager', 'admin'];

/** 403 unless `roles` reach the role the prompt's `access` sets for `action`. */
export function promptDenied(prompt: Pick<Prompt, 'slug' | 'access'>, action: PromptAction, roles: Roles): GatewayError | null {
  const role = prompt.access[action];
  if (role === undefined) return null;
  const needed = WORKSPACE_STANDING[role];
  const mine = standing(roles);
  if (mine >= needed) return null;
  return new GatewayError(403, `${action} of prompt '${prompt.slug}' needs ${STANDINGS[needed]} or above, and this key's role is ${STANDINGS[mine]}`, {
    code: 'permission_denied',
  });
}

/** 403 for members while the workspace's `membersWritePrompts` is off. */
export function writeDenied(membersWritePrompts: boolean, roles: Roles): GatewayError | null {
  if (membersWritePrompts || standing(roles) >= WORKSPACE_STANDING.manager) return null;
  return new GatewayError(403, "workspace members may not change this workspace's prompts (membersWritePrompts is off)", { code: 'permission_denied' });
}
