/** SCAFFOLD: filled in by the integrations work. */
import type { Changes } from './changes.js';
import type { Db } from './db.js';

export class IntegrationRepo {
  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
  ) {}
}
