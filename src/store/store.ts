/**
 * The store: every persisted object behind one object, SQLite by default or
 * Postgres when DATABASE_URL is set. Repositories hold the SQL (written once,
 * for both engines); the engine is only the Db underneath.
 */
import { ApiKeyRepo } from './api-keys.js';
import { BatchRepo } from './batches.js';
import { Changes } from './changes.js';
import { ConfigRepo } from './configs.js';
import type { Db } from './db.js';
import { FileRepo } from './files.js';
import { GuardrailRepo } from './guardrails.js';
import { IntegrationRepo } from './integrations.js';
import { LogRepo } from './logs.js';
import { migrate } from './migrations.js';
import { PromptRepo } from './prompts.js';
import { RateLimitPolicyRepo } from './rate-limit-policies.js';
import { ResponseRepo } from './responses.js';
import { SettingsRepo } from './settings.js';
import { UsageLimitPolicyRepo } from './usage-limit-policies.js';
import { UserRepo } from './users.js';
import { VirtualKeyRepo } from './virtual-keys.js';
import { WorkspaceRepo } from './workspaces.js';

const PING_TIMEOUT_MS = 1000;

export interface Engine extends Db {
  /** The database that takes the writes where this Db is not it alone (failover.ts): /health asks it. */
  readonly writer?: Db;
  close(): void | Promise<void>;
}

export class Store {
  readonly changes = new Changes();
  readonly workspaces: WorkspaceRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly settings: SettingsRepo;
  readonly users: UserRepo;
  readonly configs: ConfigRepo;
  readonly virtualKeys: VirtualKeyRepo;
  readonly integrations: IntegrationRepo;
  readonly guardrails: GuardrailRepo;
  readonly prompts: PromptRepo;
  readonly rateLimitPolicies: RateLimitPolicyRepo;
  readonly usageLimitPolicies: UsageLimitPolicyRepo;
  readonly logs: LogRepo;
  readonly responses: ResponseRepo;
  readonly files: FileRepo;
  readonly batches: BatchRepo;

  /**
   * `reader`: where the log and analytics reads go, and the store closes it: a Postgres read replica
   * (DB_READER_HOST), or SQLite's read process (sqlite-reads.ts).
   */
  constructor(
    readonly db: Engine,
    private readonly reader: Engine | null = null,
  ) {
    this.workspaces = new WorkspaceRepo(db, this.changes);
    this.apiKeys = new ApiKeyRepo(db, this.changes);
    this.settings = new SettingsRepo(db, this.changes);
    this.users = new UserRepo(db, this.changes);
    this.configs = new ConfigRepo(db, this.changes);
    this.virtualKeys = new VirtualKeyRepo(db, this.changes);
    this.integrations = new IntegrationRepo(db, this.changes);
    this.guardrails = new GuardrailRepo(db, this.changes);
    this.prompts = new PromptRepo(db, this.changes);
    this.rateLimitPolicies = new RateLimitPolicyRepo(db, this.changes);
    this.usageLimitPolicies = new UsageLimitPolicyRepo(db, this.changes);
    this.logs = new LogRepo(db, reader ?? db);
    this.responses = new ResponseRepo(db);
    this.files = new FileRepo(db);
    this.batches = new BatchRepo(db);
  }

  migrate(): Promise<void> {
    return migrate(this.db);
  }

  /** Whether the database (its writer) answers now; false, not an error, when it does not (for /health), within a second. */
  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const answer = (this.db.writer ?? this.db).get('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.db.close();
    await this.reader?.close();
  }
}
