/** Arguments of one command, parsed by node:util's parseArgs; a mistake is a usage error naming it. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usage } from './exit.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options every command that talks to a gateway takes. */
export const CONNECTION = {
  url: { type: 'string', short: 'u' },
  key: { type: 'string', short: 'k' },
  timeout: { type: 'string' },
} as const satisfies Options;

const HELP = { help: { type: 'boolean', short: 'h' } } as const satisfies Options;

export function parse<const O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...HELP, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw usage((e as Error).message);
  }
}

/** A whole number option within bounds, or its default. */
export function intOption(value: string | boolean | undefined, name: string, dflt: number, min: number, max: number): number {
  if (value === undefined) return dflt;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw usage(`--${name} must be an integer between ${min} and ${max}`);
  return n;
}
