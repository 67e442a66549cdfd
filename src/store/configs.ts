/** SCAFFOLD: filled in by the configs work. */
import type { Changes } from './changes.js';
import type { Db } from './db.js';

export class ConfigRepo {
  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
  ) {}
}
