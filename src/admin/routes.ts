/** Every management route, one line per resource. */
import { analyticsRoutes } from './analytics.js';
import { apiKeyRoutes } from './api-keys.js';
import { configRoutes } from './configs.js';
import { guardrailRoutes } from './guardrails.js';
import { integrationRoutes } from './integrations.js';
import { inviteRoutes } from './invites.js';
import { logRoutes } from './logs.js';
import { memberRoutes } from './members.js';
import { promptRoutes } from './prompts.js';
import { rateLimitRoutes } from './rate-limits.js';
import type { Route } from './router.js';
import { scimProvisioningRoutes } from './scim-provisioning.js';
import { scimMappingRoutes } from './scim.js';
import { settingsRoutes } from './settings.js';
import { usageLimitRoutes } from './usage-limits.js';
import { userRoutes } from './users.js';
import { virtualKeyRoutes } from './virtual-keys.js';
import { workspaceRoutes } from './workspaces.js';

export const ADMIN_ROUTES: readonly Route[] = [
  ...workspaceRoutes,
  ...memberRoutes,
  ...settingsRoutes,
  ...userRoutes,
  ...inviteRoutes,
  ...scimMappingRoutes,
  ...scimProvisioningRoutes,
  ...apiKeyRoutes,
  ...configRoutes,
  ...guardrailRoutes,
  ...promptRoutes,
  ...rateLimitRoutes,
  ...usageLimitRoutes,
  ...virtualKeyRoutes,
  ...integrationRoutes,
  ...logRoutes,
  ...analyticsRoutes,
];
