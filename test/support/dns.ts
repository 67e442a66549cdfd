/**
 * A resolver for a test gateway's upstream calls (useGateway's `lookup`):
 * names answer from a table, never from the machine's DNS. A name whose
 * entry is a list of answers gets the next one at each lookup and keeps the
 * last (a name that rebinds); any other name is ENOTFOUND.
 */
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

export interface FakeDns {
  lookup: LookupFunction;
  /** Every name looked up, in order. */
  readonly asked: string[];
}

export function fakeDns(table: Record<string, string | string[]>): FakeDns {
  const asked: string[] = [];
  const served = new Map<string, number>();
  const lookup: LookupFunction = (hostname, options, callback) => {
    asked.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
      process.nextTick(() => callback(err, ''));
      return;
    }
    const answers = typeof entry === 'string' ? [entry] : entry;
    const n = served.get(hostname) ?? 0;
    served.set(hostname, n + 1);
    const address = answers[Math.min(n, answers.length - 1)]!;
    const found: LookupAddress = { address, family: isIP(address) };
    process.nextTick(() => (options.all === true ? callback(null, [found]) : callback(null, found.address, found.family)));
  };
  return { lookup, asked };
}
