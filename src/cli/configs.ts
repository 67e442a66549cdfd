/** `switchyard configs validate FILE`: the gateway's own config validator, offline. */
import { readFileSync } from 'node:fs';
import { parseConfig } from '../config/schema.js';
import { parse } from './args.js';
import { CliError, EXIT, usage } from './exit.js';
import { print, type Command } from './output.js';

const validate: Command = {
  usage: 'switchyard configs validate FILE   (FILE - reads stdin)',
  about:
    'Checks a config (the JSON of x-gateway-config or of a saved config) with the validator the gateway itself runs, without a gateway. ' +
    'Prints "valid" and exits 0, or prints what is wrong, naming its path, and exits 1.',
  async run(args) {
    const { values, positionals } = parse(args, {});
    if (values.help === true) return print.help(this, false);
    if (positionals.length !== 1) throw usage('name one config file: switchyard configs validate FILE');
    const file = positionals[0]!;
    let text: string;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (e) {
      throw usage(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new CliError(EXIT.refused, `${file}: not JSON: ${(e as Error).message}`);
    }
    const config = parseConfig(json);
    if (!config.ok) throw new CliError(EXIT.refused, `${file}: ${config.error.message}`);
    process.stdout.write('valid\n');
  },
};

export const configs = { validate };
