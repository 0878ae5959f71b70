import { type ParseArgsConfig, parseArgs } from 'node:util';

/**
 * The command lines of the project's CLIs (`send`, `simulate`, `crm`, `ops`, `capacity`, `bench`), one way:
 * `--help` prints the command's usage with its options on standard output, exit 0; a mistake on the command
 * line is one line naming it, then the option list, on standard error, exit 2.
 */

/** A mistake on the command line: one line naming the option or argument and what it accepts. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options of a command as `--name <value>` words, for the line after a mistake. */
export function optionList(options: Options): string {
  return Object.entries(options)
    .map(([name, option]) => `--${name}${option.type === 'string' ? ' <value>' : ''}`)
    .join(' ');
}

/** parseArgs (strict, its default); its mistakes as a UsageError of their first sentence (without Node's advice). */
export function parseCommandLine<const T extends ParseArgsConfig>(
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
      throw new UsageError(error.message.split('. ')[0]!.replace(/\.$/, ''));
    throw error;
  }
}

/** What a UsageError prints: its line, then the options and where the rest is. */
export function usageLines(error: UsageError, command: string, options: Options): string {
  return `${error.message}\noptions: ${optionList(options)} (npm run ${command} -- --help says more)`;
}

/**
 * Runs a CLI's `main` and exits with its code (a negative code keeps the process running: a server); a
 * UsageError exits 2 after `usageLines`, anything else 1 after `failure(error)`'s line.
 */
export function runCommand(
  command: string,
  options: Options,
  main: () => Promise<number>,
  failure: (error: unknown) => string = (error) => (error instanceof Error ? error.message : String(error)),
): void {
  main().then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(usageLines(error, command, options));
        process.exit(2);
      }
      console.error(failure(error));
      process.exit(1);
    },
  );
}
