/** SCAFFOLD: filled in by the settings work. */
import type { Changes } from './changes.js';
import type { Db } from './db.js';

export class SettingsRepo {
  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
  ) {}
}
