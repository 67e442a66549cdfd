/** `switchyard keys create|list|rotate`: gateway keys through /v1/api-keys. */
import { CONNECTION, intOption, parse } from './args.js';
import { call, connection, query } from './client.js';
import { usage } from './exit.js';
import { print, type Command } from './output.js';

const create: Command = {
  usage: 'switchyard keys create --name NAME --scope SCOPE [--scope SCOPE…] [--type workspace|organisation] [--sub-type service|user] [--workspace ID] [--user ID] [--description TEXT] [--expires-at UNIX_SECONDS]',
  about: 'Creates a gateway key and prints it with its secret (shown this once).',
  async run(args, env) {
    const { values, positionals } = parse(args, {
      ...CONNECTION,
      name: { type: 'string' },
      scope: { type: 'string', multiple: true },
      type: { type: 'string', default: 'workspace' },
      'sub-type': { type: 'string', default: 'service' },
      workspace: { type: 'string' },
      user: { type: 'string' },
      description: { type: 'string' },
      'expires-at': { type: 'string' },
    });
    if (values.help === true) return print.help(this);
    if (positionals.length > 0) throw usage(`unexpected argument '${positionals[0]}'`);
    if (values.name === undefined) throw usage('--name is required');
    if (values.scope === undefined) throw usage('--scope is required (once per scope, e.g. --scope completions.write)');
    if (!['workspace', 'organisation'].includes(values.type!)) throw usage('--type must be workspace or organisation');
    if (!['service', 'user'].includes(values['sub-type']!)) throw usage('--sub-type must be service or user');
    const body = {
      name: values.name,
      scopes: values.scope,
      workspace_id: values.workspace,
      user_id: values.user,
      description: values.description,
      expires_at: values['expires-at'] === undefined ? undefined : intOption(values['expires-at'], 'expires-at', 0, 1, Number.MAX_SAFE_INTEGER),
    };
    print.json(await call(connection(values, env), 'POST', `/api-keys/${values.type}/${values['sub-type']}`, body));
  },
};

const list: Command = {
  usage: 'switchyard keys list [--workspace ID] [--type organisation-service|workspace-service|workspace-user] [--limit N] [--after ID]',
  about: 'Lists gateway keys (never their secrets), one page.',
  async run(args, env) {
    const { values, positionals } = parse(args, { ...CONNECTION, workspace: { type: 'string' }, type: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' } });
    if (values.help === true) return print.help(this);
    if (positionals.length > 0) throw usage(`unexpected argument '${positionals[0]}'`);
    const q = query({ workspace_id: values.workspace, type: values.type, limit: values.limit, after: values.after });
    print.json(await call(connection(values, env), 'GET', `/api-keys${q}`));
  },
};

const rotate: Command = {
  usage: 'switchyard keys rotate ID [--transition-ms MS]',
  about: 'Rotates a gateway key and prints the new secret; the old one works on for the transition period.',
  async run(args, env) {
    const { values, positionals } = parse(args, { ...CONNECTION, 'transition-ms': { type: 'string' } });
    if (values.help === true) return print.help(this);
    if (positionals.length !== 1) throw usage('name the key to rotate: switchyard keys rotate ID');
    const transition = values['transition-ms'] === undefined ? undefined : intOption(values['transition-ms'], 'transition-ms', 0, 0, Number.MAX_SAFE_INTEGER);
    const body = transition === undefined ? {} : { key_transition_period_ms: transition };
    print.json(await call(connection(values, env), 'POST', `/api-keys/${encodeURIComponent(positionals[0]!)}/rotate`, body));
  },
};

export const keys = { create, list, rotate };
