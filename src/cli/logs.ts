/**
 * `switchyard logs tail`: prints the request logs as they are written, one
 * JSON line each, oldest first, until interrupted. GET /v1/logs answers
 * newest first and pages towards older ones (`after`), so each poll reads
 * from a little before the newest log seen (`start_time`) down to it: a log
 * the writer thread stores late, with an earlier time, is still printed, and
 * the ids already printed (the last few thousand) are not printed again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CONNECTION, intOption, parse } from './args.js';
import { call, connection, query, type Connection } from './client.js';
import { usage } from './exit.js';
import { print, type Command } from './output.js';

interface Log {
  id: string;
  created_at_ms: number;
}
interface LogPage {
  data: Log[];
  has_more: boolean;
  last_id: string | null;
}

/** How far back each poll looks behind the newest log seen: logs reach the store in batches. */
const OVERLAP_MS = 10_000;
/** Pages one poll reads at most (100 logs each); a burst beyond it is caught up on the next poll. */
const MAX_PAGES = 20;
/** Ids remembered as printed. */
const REMEMBERED = 5000;

const tail: Command = {
  usage: 'switchyard logs tail [--lines N] [--interval MS] [--workspace ID] [--provider NAME] [--model NAME] [--status CODES]',
  about: 'Follows the request logs (GET /v1/logs): prints the last N (default 10), then each new one as it is stored, one JSON object a line. Ctrl-C stops it (exit 0).',
  async run(args, env) {
    const { values, positionals } = parse(args, {
      ...CONNECTION,
      lines: { type: 'string', short: 'n' },
      interval: { type: 'string' },
      workspace: { type: 'string' },
      provider: { type: 'string' },
      model: { type: 'string' },
      status: { type: 'string' },
    });
    if (values.help === true) return print.help(this);
    if (positionals.length > 0) throw usage(`unexpected argument '${positionals[0]}'`);
    const c = connection(values, env);
    // Interrupting is how a tail ends: a success, not a failure.
    process.once('SIGINT', () => process.exit(0));
    const lines = intOption(values.lines, 'lines', 10, 0, 100);
    const interval = intOption(values.interval, 'interval', 1000, 50, 3_600_000);
    const filters = { workspace_id: values.workspace, provider: values.provider, model: values.model, status: values.status };

    const printed = new Set<string>();
    const show = (logs: Log[]): void => {
      for (const log of logs.sort((a, b) => a.created_at_ms - b.created_at_ms || (a.id < b.id ? -1 : 1))) {
        if (printed.has(log.id)) continue;
        printed.add(log.id);
        if (printed.size > REMEMBERED) printed.delete(printed.values().next().value!);
        process.stdout.write(`${JSON.stringify(log)}\n`);
      }
    };
    // The newest page: the last `lines` are printed, the rest only remembered, so the polls' overlap does not print them.
    const first = (await call(c, 'GET', `/logs${query({ ...filters, limit: '100' })}`)) as LogPage;
    let newest = first.data[0]?.created_at_ms ?? Date.now() - OVERLAP_MS;
    // Older than a full first page is not this tail's: the overlap never reaches below it.
    const floor = first.has_more ? first.data.at(-1)!.created_at_ms : 0;
    for (const l of first.data.slice(lines)) printed.add(l.id);
    show(first.data.slice(0, lines));
    for (;;) {
      await sleep(interval);
      const fresh = await since(c, filters, Math.max(newest - OVERLAP_MS, floor));
      show(fresh);
      for (const l of fresh) newest = Math.max(newest, l.created_at_ms);
    }
  },
};

/** Every log from `fromMs` on (up to MAX_PAGES pages). */
async function since(c: Connection, filters: Record<string, string | undefined>, fromMs: number): Promise<Log[]> {
  const out: Log[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = (await call(c, 'GET', `/logs${query({ ...filters, start_time: (fromMs / 1000).toFixed(3), limit: '100', after })}`)) as LogPage;
    out.push(...page.data);
    if (!page.has_more || page.last_id === null) break;
    after = page.last_id;
  }
  return out;
}

export const logs = { tail };
