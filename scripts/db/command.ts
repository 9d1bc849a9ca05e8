import { withTargetDatabase } from "../local/target-database";

/** Bad input or a conflict: reported (with the usage text when `usage`), exit code 1. */
export class CommandInputError extends Error {
  constructor(
    message: string,
    readonly usage = true,
  ) {
    super(message);
  }
}

/**
 * Runs a command of the database scripts (client:create, project:create): parses its arguments,
 * prints the usage for `--help`, runs it against DATABASE_URL or the embedded database, and
 * reports a failure on stderr with exit code 1.
 */
export function runDatabaseCommand<Request>(command: {
  name: string;
  usage: string;
  parse: (argv: string[]) => Request | "help";
  run: (url: string, label: string, request: Request) => Promise<void>;
}): void {
  const main = async () => {
    const request = command.parse(process.argv.slice(2));
    if (request === "help") {
      process.stdout.write(`${command.usage}\n`);
      return;
    }
    await withTargetDatabase((url, target) => command.run(url, target.label, request));
  };
  main().catch((error: unknown) => {
    if (error instanceof CommandInputError) {
      process.stderr.write(`${command.name}: ${error.message}\n${error.usage ? `${command.usage}\n` : ""}`);
    } else {
      process.stderr.write(
        `${command.name} failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
    process.exitCode = 1;
  });
}
