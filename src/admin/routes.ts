/** Every management route, one line per resource. */
import { rateLimitRoutes } from './rate-limits.js';
import type { Route } from './router.js';
import { workspaceRoutes } from './workspaces.js';

export const ADMIN_ROUTES: readonly Route[] = [
  ...workspaceRoutes,
  ...rateLimitRoutes,
];
