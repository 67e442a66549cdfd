/** Every management route, one line per resource. */
import type { Route } from './router.js';
import { integrationRoutes } from './integrations.js';
import { virtualKeyRoutes } from './virtual-keys.js';
import { workspaceRoutes } from './workspaces.js';

export const ADMIN_ROUTES: readonly Route[] = [...workspaceRoutes, ...virtualKeyRoutes, ...integrationRoutes];
