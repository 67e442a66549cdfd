/**
 * Schema migrations, applied in order and recorded in schema_migrations.
 * Append only: a shipped migration never changes. Plain SQL both engines
 * accept: TEXT ids, TEXT holding JSON, INTEGER 0/1 booleans, BIGINT Unix seconds.
 */
import type { Db } from './db.js';
import { nowSeconds } from './ids.js';
import { addPairFacts } from './log-pairs.js';
import { partitionLogTables } from './log-partitions.js';
import { CROSS_TABLE_SQL, crossUpRows, rollUpRows, ROLLUP_TABLE_SQL } from './log-rollup.js';

export interface Migration {
  id: number;
  name: string;
  sql: string;
  /** Where Postgres needs other SQL than SQLite (its own JSON functions), or steps that read as they go. */
  postgres?: string | ((tx: Db) => Promise<void>);
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'workspaces and api keys',
    sql: `
      CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        description TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        is_default INTEGER NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        sub_type TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        user_id TEXT,
        scopes TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL DEFAULT 'active',
        expires_at BIGINT,
        created_at BIGINT NOT NULL,
        last_reset_at BIGINT
      );
    `,
  },
  {
    id: 2,
    name: 'control plane: settings, users, key rotation, configs, virtual keys, integrations',
    sql: `
      ALTER TABLE workspaces ADD COLUMN metadata TEXT;
      ALTER TABLE workspaces ADD COLUMN settings TEXT;
      ALTER TABLE workspaces ADD COLUMN defaults TEXT;
      ALTER TABLE workspaces ADD COLUMN last_reset_at BIGINT;

      CREATE TABLE meta (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );

      CREATE TABLE org_settings (
        id INTEGER PRIMARY KEY,
        settings TEXT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );

      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        first_name TEXT,
        last_name TEXT,
        role TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE TABLE workspace_members (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (workspace_id, user_id)
      );
      CREATE TABLE invites (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        workspaces TEXT NOT NULL,
        status TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        accepted_at BIGINT
      );
      CREATE TABLE scim_groups (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE scim_group_workspaces (
        group_id TEXT NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        role TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (group_id, workspace_id)
      );
      CREATE TABLE scim_group_members (
        group_id TEXT NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        PRIMARY KEY (group_id, user_id)
      );

      ALTER TABLE api_keys ADD COLUMN description TEXT;
      ALTER TABLE api_keys ADD COLUMN key_hint TEXT;
      ALTER TABLE api_keys ADD COLUMN previous_key_hash TEXT;
      ALTER TABLE api_keys ADD COLUMN previous_key_expires_at BIGINT;
      ALTER TABLE api_keys ADD COLUMN rotation_policy TEXT;
      ALTER TABLE api_keys ADD COLUMN last_rotated_at BIGINT;
      ALTER TABLE api_keys ADD COLUMN defaults TEXT;
      ALTER TABLE api_keys ADD COLUMN metadata TEXT;
      ALTER TABLE api_keys ADD COLUMN creation_mode TEXT NOT NULL DEFAULT 'api';
      ALTER TABLE api_keys ADD COLUMN last_updated_at BIGINT;
      CREATE INDEX api_keys_previous_hash ON api_keys (previous_key_hash);
      CREATE INDEX api_keys_workspace ON api_keys (workspace_id, id);

      CREATE TABLE configs (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        is_default INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'active',
        version_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE INDEX configs_workspace ON configs (workspace_id, id);
      CREATE TABLE config_versions (
        id TEXT PRIMARY KEY,
        config_id TEXT NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        config TEXT NOT NULL,
        description TEXT,
        created_at BIGINT NOT NULL,
        UNIQUE (config_id, version)
      );

      CREATE TABLE integrations (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        description TEXT,
        provider TEXT NOT NULL,
        workspace_id TEXT REFERENCES workspaces(id),
        credentials TEXT,
        configurations TEXT,
        pricing_adjustments TEXT,
        secret_mappings TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL,
        last_reset_at BIGINT
      );
      CREATE TABLE integration_workspaces (
        integration_id TEXT NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        PRIMARY KEY (integration_id, workspace_id)
      );
      CREATE TABLE integration_models (
        integration_id TEXT NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
        slug TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        pricing_config TEXT,
        configurations TEXT,
        PRIMARY KEY (integration_id, slug)
      );

      CREATE TABLE virtual_keys (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        provider TEXT NOT NULL,
        integration_id TEXT REFERENCES integrations(id) ON DELETE CASCADE,
        credentials TEXT,
        key_hint TEXT,
        note TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL,
        last_reset_at BIGINT,
        UNIQUE (workspace_id, slug)
      );
    `,
  },
  {
    id: 3,
    name: 'api keys: scheduled rotation (indexed due time, the rotated-in secret sealed for its owner)',
    sql: `
      ALTER TABLE api_keys ADD COLUMN next_rotation_at BIGINT;
      ALTER TABLE api_keys ADD COLUMN rotated_key TEXT;
      CREATE INDEX api_keys_next_rotation ON api_keys (next_rotation_at);
    `,
  },
  {
    id: 4,
    name: 'identity: membership source, SCIM mapping ids, user key lookup',
    sql: `
      ALTER TABLE workspace_members ADD COLUMN source TEXT NOT NULL DEFAULT 'direct';
      ALTER TABLE scim_group_workspaces ADD COLUMN id TEXT;
      UPDATE scim_group_workspaces SET id = group_id || ':' || workspace_id WHERE id IS NULL;
      CREATE UNIQUE INDEX scim_group_workspaces_id ON scim_group_workspaces (id);
      CREATE INDEX api_keys_user ON api_keys (user_id, workspace_id);
      CREATE INDEX workspace_members_user ON workspace_members (user_id);
    `,
  },
  {
    id: 5,
    name: 'credentials: display copies of provider settings, allow_all_models, providers by integration',
    sql: `
      ALTER TABLE virtual_keys ADD COLUMN settings TEXT;
      ALTER TABLE integrations ADD COLUMN allow_all_models INTEGER NOT NULL DEFAULT 1;
      CREATE INDEX virtual_keys_integration ON virtual_keys (integration_id);
    `,
  },
  {
    id: 6,
    name: 'configs: description, one default per workspace',
    sql: `
      ALTER TABLE configs ADD COLUMN description TEXT;
      CREATE UNIQUE INDEX configs_one_default ON configs (workspace_id) WHERE is_default = 1;
      CREATE INDEX config_versions_config ON config_versions (config_id, id);
    `,
  },
  {
    id: 7,
    name: 'rate-limit policies',
    sql: `
      CREATE TABLE rate_limit_policies (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT,
        conditions TEXT NOT NULL,
        group_by TEXT NOT NULL,
        type TEXT NOT NULL,
        unit TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL DEFAULT 'active',
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE INDEX rate_limit_policies_workspace ON rate_limit_policies (workspace_id, status, id);
    `,
  },
  {
    id: 8,
    // No foreign keys to workspaces or keys: logs outlive the objects they name,
    // and a check per row would slow the batch writes. Metadata pairs get a
    // table of their own so `metadata.<key>=value` filters are an indexed
    // lookup on both engines, not a scan of JSON text.
    name: 'request logs',
    sql: `
      CREATE TABLE request_logs (
        id TEXT PRIMARY KEY,
        created_at_ms BIGINT NOT NULL,
        trace_id TEXT NOT NULL,
        span_id TEXT,
        parent_span_id TEXT,
        span_name TEXT,
        workspace_id TEXT NOT NULL,
        api_key_id TEXT NOT NULL,
        user_id TEXT,
        config_id TEXT,
        virtual_key_id TEXT,
        integration_id TEXT,
        prompt_id TEXT,
        provider TEXT,
        model TEXT,
        endpoint TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        status INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        upstream_ttfb_ms INTEGER,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        total_tokens INTEGER,
        tokens_estimated INTEGER NOT NULL DEFAULT 0,
        cost_usd DOUBLE PRECISION,
        cache_status TEXT,
        retry_count INTEGER NOT NULL DEFAULT 0,
        last_used_option_index TEXT,
        metadata TEXT,
        error TEXT,
        request_headers TEXT,
        request_body TEXT,
        response_body TEXT,
        log_format TEXT NOT NULL
      );
      CREATE INDEX request_logs_created ON request_logs (created_at_ms);
      CREATE INDEX request_logs_workspace ON request_logs (workspace_id, id);
      CREATE INDEX request_logs_api_key ON request_logs (api_key_id, id);
      CREATE INDEX request_logs_trace ON request_logs (trace_id);
      CREATE TABLE log_metadata (
        log_id TEXT NOT NULL REFERENCES request_logs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (log_id, key)
      );
      CREATE INDEX log_metadata_pair ON log_metadata (key, value);
    `,
  },
  {
    id: 9,
    // Usage is counted in memory or Redis (src/limits/budgets.ts); the row holds
    // the policy and its alert state. next_usage_reset_at is an anchor the user
    // set (unix seconds, UTC midnight); null: periods follow the calendar.
    name: 'usage-limit policies',
    sql: `
      CREATE TABLE usage_limit_policies (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT,
        conditions TEXT NOT NULL,
        group_by TEXT NOT NULL,
        type TEXT NOT NULL,
        credit_limit DOUBLE PRECISION NOT NULL,
        alert_threshold DOUBLE PRECISION,
        periodic_reset TEXT,
        periodic_reset_days INTEGER,
        next_usage_reset_at BIGINT,
        status TEXT NOT NULL DEFAULT 'active',
        threshold_alerted_at BIGINT,
        exhausted_at BIGINT,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE INDEX usage_limit_policies_workspace ON usage_limit_policies (workspace_id, status, id);
    `,
  },
  {
    id: 11,
    // What a policy does while its counters (Redis) cannot be reached: 'open'
    // admits requests uncounted, 'closed' refuses them. Existing policies keep
    // failing open, as they did before the column existed.
    name: 'policy fail mode',
    sql: `
      ALTER TABLE rate_limit_policies ADD COLUMN fail_mode TEXT NOT NULL DEFAULT 'open';
      ALTER TABLE usage_limit_policies ADD COLUMN fail_mode TEXT NOT NULL DEFAULT 'open';
    `,
  },
  {
    id: 12,
    // Config slugs were unique across the organisation: a workspace learnt
    // another's slugs from the 409. SQLite cannot drop a column's UNIQUE, so
    // the table is rebuilt, and config_versions with it: dropping configs
    // while versions still referenced it would cascade-delete them (SQLite,
    // foreign keys on). Renaming configs_v2 to configs makes SQLite rewrite
    // config_versions_v2's reference; Postgres follows the table itself.
    name: 'configs: slugs unique per workspace',
    sql: `
      CREATE TABLE configs_v2 (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        description TEXT,
        is_default INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'active',
        version_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL,
        UNIQUE (workspace_id, slug)
      );
      INSERT INTO configs_v2 (id, slug, workspace_id, name, description, is_default, status, version_id, created_at, last_updated_at)
        SELECT id, slug, workspace_id, name, description, is_default, status, version_id, created_at, last_updated_at FROM configs;
      CREATE TABLE config_versions_v2 (
        id TEXT PRIMARY KEY,
        config_id TEXT NOT NULL REFERENCES configs_v2(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        config TEXT NOT NULL,
        description TEXT,
        created_at BIGINT NOT NULL,
        UNIQUE (config_id, version)
      );
      INSERT INTO config_versions_v2 (id, config_id, version, config, description, created_at)
        SELECT id, config_id, version, config, description, created_at FROM config_versions;
      DROP TABLE config_versions;
      DROP TABLE configs;
      ALTER TABLE configs_v2 RENAME TO configs;
      ALTER TABLE config_versions_v2 RENAME TO config_versions;
      CREATE INDEX configs_workspace ON configs (workspace_id, id);
      CREATE UNIQUE INDEX configs_one_default ON configs (workspace_id) WHERE is_default = 1;
      CREATE INDEX config_versions_config ON config_versions (config_id, id);
    `,
  },
  {
    id: 13,
    // What a request's hooks and guardrails found (JSON), read with one log.
    name: 'request logs: hook results',
    sql: `
      ALTER TABLE request_logs ADD COLUMN hook_results TEXT;
    `,
  },
  {
    id: 14,
    // Saved guardrails: a workspace's, or the organisation's (workspace_id
    // null). Slugs are unique per workspace and among the organisation's; a
    // plain UNIQUE (workspace_id, slug) would let NULLs repeat on both
    // engines, hence the index on COALESCE.
    name: 'guardrails',
    sql: `
      CREATE TABLE guardrails (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL,
        workspace_id TEXT REFERENCES workspaces(id),
        name TEXT NOT NULL,
        checks TEXT NOT NULL,
        actions TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'active',
        version INTEGER NOT NULL,
        version_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE UNIQUE INDEX guardrails_slug ON guardrails (COALESCE(workspace_id, ''), slug);
      CREATE INDEX guardrails_workspace ON guardrails (workspace_id, id);
    `,
  },
  {
    id: 15,
    // Guardrail verdicts to filter and group logs by, taken from hook_results
    // when a log is written: the request's outcome, and one row per check it
    // ran. Most requests run no hooks: the status index leaves them out.
    name: 'request logs: guardrail verdicts',
    sql: `
      ALTER TABLE request_logs ADD COLUMN hook_status TEXT;
      CREATE INDEX request_logs_hook_status ON request_logs (hook_status, id) WHERE hook_status IS NOT NULL;
      CREATE TABLE log_checks (
        log_id TEXT NOT NULL REFERENCES request_logs(id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        outcome TEXT NOT NULL,
        PRIMARY KEY (log_id, check_id)
      );
      CREATE INDEX log_checks_check ON log_checks (check_id, log_id);
    `,
  },
  {
    id: 16,
    // The checks a request ran as one JSON object on its row ({"default.regexMatch": "passed"}):
    // three index entries per check in log_checks were a third of a guarded request's log write.
    name: 'request logs: check outcomes on the row',
    sql: `
      ALTER TABLE request_logs ADD COLUMN hook_checks TEXT;
      UPDATE request_logs SET hook_checks = (SELECT json_group_object(check_id, outcome) FROM log_checks WHERE log_id = request_logs.id)
        WHERE id IN (SELECT log_id FROM log_checks);
      DROP TABLE log_checks;
    `,
    postgres: `
      ALTER TABLE request_logs ADD COLUMN hook_checks TEXT;
      UPDATE request_logs SET hook_checks = (SELECT json_object_agg(check_id, outcome)::text FROM log_checks WHERE log_id = request_logs.id)
        WHERE id IN (SELECT log_id FROM log_checks);
      DROP TABLE log_checks;
    `,
  },
  {
    id: 17,
    // Prompts and their partials share one table (kind 'prompt' or
    // 'partial'): both are named, versioned templates of a workspace. A
    // version is never changed; the prompt points at its default (published)
    // version, and labels (production, staging, custom) point at others.
    // Logs keep the version a request rendered beside its prompt id.
    name: 'prompts, partials, versions and labels; request logs: prompt version',
    sql: `
      CREATE TABLE prompts (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        slug TEXT NOT NULL,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        virtual_key TEXT,
        config_id TEXT,
        access TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        default_version_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL,
        UNIQUE (workspace_id, kind, slug)
      );
      CREATE INDEX prompts_workspace ON prompts (workspace_id, kind, id);
      CREATE TABLE prompt_versions (
        id TEXT PRIMARY KEY,
        prompt_id TEXT NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        template TEXT NOT NULL,
        parameters TEXT NOT NULL,
        metadata TEXT,
        model TEXT,
        description TEXT,
        created_at BIGINT NOT NULL,
        UNIQUE (prompt_id, version)
      );
      CREATE INDEX prompt_versions_prompt ON prompt_versions (prompt_id, id);
      CREATE TABLE prompt_labels (
        prompt_id TEXT NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
        label TEXT NOT NULL,
        version_id TEXT NOT NULL REFERENCES prompt_versions(id) ON DELETE CASCADE,
        PRIMARY KEY (prompt_id, label)
      );
      ALTER TABLE request_logs ADD COLUMN prompt_version INTEGER;
    `,
  },
  {
    id: 18,
    // Responses the gateway made (POST /v1/responses over a provider's chat
    // API, store true): the Response object, the turn's input items, and the
    // response it continues, for previous_response_id chains.
    name: 'stored responses',
    sql: `
      CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        previous_response_id TEXT,
        status TEXT NOT NULL,
        response TEXT NOT NULL,
        input TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX responses_workspace ON responses (workspace_id, id);
    `,
  },
  {
    id: 19,
    // Files the gateway keeps (their bytes in the data dir or an S3 bucket,
    // batches/storage.ts) and the batches it runs: the batch row is the job's
    // durable state (a cursor into its input file, the lines claimed before
    // they are sent, a lease naming the process running it), each line's
    // outcome a row until the batch's files are written.
    name: 'files, gateway-managed batches and their line outcomes',
    sql: `
      CREATE TABLE files (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        purpose TEXT NOT NULL,
        filename TEXT NOT NULL,
        bytes BIGINT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX files_workspace ON files (workspace_id, id);
      CREATE TABLE batches (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        api_key_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        input_file_id TEXT NOT NULL,
        completion_window TEXT NOT NULL,
        status TEXT NOT NULL,
        headers TEXT NOT NULL,
        metadata TEXT,
        errors TEXT,
        output_file_id TEXT,
        error_file_id TEXT,
        total INTEGER NOT NULL DEFAULT 0,
        completed INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0,
        next_line INTEGER NOT NULL DEFAULT 0,
        next_offset BIGINT NOT NULL DEFAULT 0,
        claimed_line INTEGER NOT NULL DEFAULT 0,
        lease_holder TEXT,
        lease_expires_at BIGINT,
        created_at BIGINT NOT NULL,
        in_progress_at BIGINT,
        expires_at BIGINT NOT NULL,
        finalizing_at BIGINT,
        completed_at BIGINT,
        failed_at BIGINT,
        expired_at BIGINT,
        cancelling_at BIGINT,
        cancelled_at BIGINT
      );
      CREATE INDEX batches_workspace ON batches (workspace_id, id);
      CREATE INDEX batches_status ON batches (status);
      CREATE TABLE batch_outcomes (
        batch_id TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        ok INTEGER NOT NULL,
        result TEXT NOT NULL,
        PRIMARY KEY (batch_id, line)
      );
    `,
  },
  {
    id: 20,
    // Postgres only (log-partitions.ts): request_logs and log_metadata
    // partitioned by day, so retention drops days instead of deleting rows.
    // SQLite keeps its tables, whose deletes are cheap at the sizes it serves.
    name: 'request logs: partitioned by day on Postgres',
    sql: '',
    postgres: partitionLogTables,
  },
  {
    id: 21,
    // A batch a provider runs (a Bedrock model invocation job) keeps its row
    // beside the gateway's own: the job's ARN, S3 URIs, model and virtual key
    // as JSON. Such a row is never leased or run by the batch engine.
    name: 'provider-run batches',
    sql: `
      ALTER TABLE batches ADD COLUMN provider_job TEXT;
    `,
  },
  {
    id: 22,
    // Postgres only (log-rollup.ts): hourly sums per workspace and group
    // value, kept by the log writer, from which the group routes answer
    // instead of reading every log. Filled here from the logs already
    // stored (two passes over them, time in proportion to the table); logs that
    // a gateway of the previous version writes after this commits are not
    // rolled up (docs/logs.md).
    name: 'request logs: hourly rollup on Postgres',
    sql: '',
    postgres: async (tx) => {
      await tx.exec(ROLLUP_TABLE_SQL);
      await rollUpRows(tx, 'TRUE');
    },
  },
  {
    id: 23,
    // Postgres only (log-pairs.ts): each metadata pair carries a copy of its
    // log's filtered and summed columns, so a group filtered by metadata
    // reads the matching pairs instead of every log of its window. Filled
    // here from the logs already stored.
    name: "request logs: metadata pairs carry their log's columns on Postgres",
    sql: '',
    postgres: addPairFacts,
  },
  {
    id: 24,
    // Postgres only (log-rollup.ts): hourly sums per workspace, vendor, model
    // and status together, so a group filtered on one of those and grouped by
    // another answers without reading every log. Filled here from the logs
    // already stored (one pass over them), as migration 22 fills its rollup.
    name: 'request logs: cross rollup of vendor, model and status on Postgres',
    sql: '',
    postgres: async (tx) => {
      await tx.exec(CROSS_TABLE_SQL);
      await crossUpRows(tx, 'TRUE');
    },
  },
];

/**
 * Applies what is missing, all in one transaction: SQLite's BEGIN IMMEDIATE
 * and Postgres's advisory lock make a second process wait, then find
 * everything applied.
 */
export async function migrate(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    if (tx.engine === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    const applied = new Set((await tx.all<{ id: number }>('SELECT id FROM schema_migrations')).map((r) => r.id));
    for (const m of MIGRATIONS) {
      if (applied.has(m.id)) continue;
      await applyMigration(tx, m);
      await tx.run('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)', [m.id, m.name, nowSeconds()]);
    }
  });
}

/** Runs one migration's steps for the engine (without recording it). */
export function applyMigration(tx: Db, m: Migration): Promise<void> {
  const step = tx.engine === 'postgres' ? (m.postgres ?? m.sql) : m.sql;
  return typeof step === 'string' ? tx.exec(step) : step(tx);
}

/** Arbitrary constant naming the migration lock; every migrator of the same database takes it. */
export const MIGRATION_LOCK = 0x5377_6d67;
