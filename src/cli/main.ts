#!/usr/bin/env node
/**
 * The `switchyard` command (package.json `bin`): `start` runs the gateway in
 * this process; `keys`, `configs`, `logs` talk to a running gateway over its
 * HTTP API, except `configs validate`, which runs the gateway's own
 * validator offline; `bench` runs the benchmark. Exit codes: exit.ts, docs/cli.md.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../shared/version.js';
import { intOption, parse } from './args.js';
import { configs } from './configs.js';
import { CliError, EXIT, usage } from './exit.js';
import { keys } from './keys.js';
import { logs } from './logs.js';
import { print, type Command } from './output.js';

const start: Command = {
  usage: 'switchyard start [--port PORT] [--host ADDRESS] [--data-dir DIR]',
  about:
    'Starts the gateway in the foreground, as `npm start` does; its settings come from the environment (docs/deploy.md), ' +
    'the options override PORT, HOST and GATEWAY_DATA_DIR. SIGTERM or Ctrl-C drains it. Exits 1 when it cannot start.',
  async run(args, env) {
    const { values, positionals } = parse(args, { port: { type: 'string', short: 'p' }, host: { type: 'string' }, 'data-dir': { type: 'string' } });
    if (values.help === true) return print.help(this, false);
    if (positionals.length > 0) throw usage(`unexpected argument '${positionals[0]}'`);
    if (values.port !== undefined) env.PORT = String(intOption(values.port, 'port', 8787, 0, 65535));
    if (values.host !== undefined) env.HOST = values.host;
    if (values['data-dir'] !== undefined) env.GATEWAY_DATA_DIR = values['data-dir'];
    // The gateway process itself: it reads the environment, listens, and exits on its own terms.
    await import('../main.js');
  },
};

/** dist/bench/run.js, beside dist/src/cli/. */
const BENCH = fileURLToPath(new URL('../../bench/run.js', import.meta.url));

const bench: Command = {
  usage: 'switchyard bench [BENCHMARK OPTIONS…]',
  about: 'Runs the benchmark (node dist/bench/run.js, bench/README.md) with the options given, and exits with its exit code. Needs a source checkout (npm install); the container image has no benchmark.',
  async run(args) {
    if (args.includes('--help') || args.includes('-h')) return print.help(this, false);
    if (!existsSync(BENCH)) throw usage(`no benchmark at ${BENCH}: run it from a source checkout after npm install`);
    const child = spawn(process.execPath, [BENCH, ...args], { stdio: 'inherit' });
    const code = await new Promise<number>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal === null ? 1 : 128))));
    process.exitCode = code;
  },
};

const GROUPS: Record<string, Command | Record<string, Command>> = { start, keys, configs, logs, bench };

const HELP = `Usage: switchyard COMMAND [OPTIONS]

Commands:
  start                      start the gateway (settings from the environment)
  keys create|list|rotate    manage gateway keys on a running gateway
  configs validate FILE      check a config offline with the gateway's validator
  logs tail                  follow the request logs of a running gateway
  bench                      run the benchmark

\`switchyard COMMAND --help\` tells more. Exit codes: 0 done, 1 refused by the gateway (or an invalid
config), 2 bad usage, 3 no answer from the gateway.
`;

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    if (name === undefined) process.exitCode = EXIT.usage;
    return;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const group = GROUPS[name];
  if (group === undefined) throw usage(`unknown command '${name}' (switchyard --help lists them)`);
  if (typeof group.run === 'function') return (group as Command).run(rest, process.env);
  const commands = group as Record<string, Command>;
  const [sub, ...args] = rest;
  const names = Object.keys(commands).join('|');
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(`Usage: switchyard ${name} ${names} [OPTIONS]\n\n${Object.values(commands).map((c) => `  ${c.usage}\n      ${c.about}`).join('\n')}\n`);
    if (sub === undefined) process.exitCode = EXIT.usage;
    return;
  }
  const command = commands[sub];
  if (command === undefined) throw usage(`unknown command '${name} ${sub}': one of ${name} ${names}`);
  return command.run(args, process.env);
}

try {
  await main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof CliError)) throw e;
  process.stderr.write(`switchyard: ${e.message}\n`);
  process.exitCode = e.code;
}
