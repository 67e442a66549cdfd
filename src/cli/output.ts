/** What a command prints: answers as JSON on stdout, help text; and the shape of a command. */

export interface Command {
  usage: string;
  about: string;
  run(args: string[], env: NodeJS.ProcessEnv): Promise<void>;
}

/** The options every command that talks to a gateway takes, for the help texts. */
export const CONNECTION_HELP = `Connection:
  -u, --url URL     the gateway (default $SWITCHYARD_URL, else http://127.0.0.1:8787)
  -k, --key KEY     a gateway key (default $SWITCHYARD_API_KEY)
      --timeout MS  how long to wait for an answer (default 30000)
  -h, --help        this help`;

export const print = {
  json(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  },
  help(command: Pick<Command, 'usage' | 'about'>, connection = true): void {
    process.stdout.write(`Usage: ${command.usage}\n\n${command.about}\n${connection ? `\n${CONNECTION_HELP}\n` : ''}`);
  },
};
