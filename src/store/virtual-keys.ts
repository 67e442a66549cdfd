/** SCAFFOLD: filled in by the virtual-keys work. */
import type { Changes } from './changes.js';
import type { Db } from './db.js';

export class VirtualKeyRepo {
  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
  ) {}
}
