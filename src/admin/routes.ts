/** Every management route, one line per resource. */
import { apiKeyRoutes } from './api-keys.js';
import { configRoutes } from './configs.js';
import type { Route } from './router.js';
import { workspaceRoutes } from './workspaces.js';

export const ADMIN_ROUTES: readonly Route[] = [...workspaceRoutes, ...apiKeyRoutes, ...configRoutes];
