import { Command, CommanderError, Option } from 'commander';
import { invalid } from '../domain/error-catalogue.js';
import type { DomainError } from '../domain/error-catalogue.js';
import { need } from './admin-args.js';
import type { AdminCommand, Flags, OptionSpec } from './admin-args.js';

/** The options every admin command takes besides its own: where the store is, and how to print. */
export const COMMON_OPTIONS: readonly OptionSpec[] = [
  { flag: 'data-dir', arg: 'DIR', help: 'the data dir holding the SQLite store (default ./data; env MEDIAGEN_DATA_DIR)' },
  { flag: 'database-url', arg: 'URL', help: 'a PostgreSQL store instead (env MEDIAGEN_DATABASE_URL, which keeps its password out of ps)' },
  { flag: 'config', arg: 'FILE', help: 'a JSON config file (env MEDIAGEN_CONFIG)' },
  { flag: 'json', help: 'print the result as JSON' },
];

/** The command a command line names, with its flags by flag name. */
export interface Chosen {
  readonly command: AdminCommand;
  readonly flags: Flags;
}

/** `--workspace W [--api-access on|off] [--models PATTERN]...`: a command's own options. */
export function usageOf(spec: AdminCommand): string[] {
  return spec.options.map((o) => {
    const bare = o.arg ? `--${o.flag} ${o.arg}` : `--${o.flag}`;
    return `${o.required ? bare : `[${bare}]`}${o.repeatable ? '...' : ''}`;
  });
}

const WRAP = 72;
const WHO_COLUMN = 74;

/** A command's line(s) in `mediagen admin --help`: name and options wrapped, who may run it on the right. */
export function helpLines(spec: AdminCommand): string {
  const head = `  ${spec.name}`;
  const lines: string[] = [];
  let line = head;
  for (const t of usageOf(spec)) {
    if (line !== head && line.length + 1 + t.length > WRAP) {
      lines.push(line);
      line = `${' '.repeat(head.length)} ${t}`;
    } else line += ` ${t}`;
  }
  if (spec.who) line = `${line.padEnd(WHO_COLUMN - 1)} ${spec.who}`;
  return [...lines, line].join('\n');
}

/**
 * Commander reports through exceptions (exitOverride) and prints nothing of its own but help and
 * the version. Unknown options and extra words are kept (`args`) for the action, which refuses them
 * in our words: naming the command's valid options, or the command a misplaced option belongs to.
 */
function quiet(cmd: Command): Command {
  return cmd
    .exitOverride()
    .configureOutput({ outputError: () => undefined })
    .allowUnknownOption()
    .allowExcessArguments()
    .enablePositionalOptions()
    .helpOption('-h, --help', 'show this help');
}

function toOption(o: OptionSpec): Option {
  const opt = new Option(o.arg ? `--${o.flag} <${o.arg}>` : `--${o.flag}`, `${o.help}${o.required ? ' (required)' : ''}`);
  if (o.repeatable) opt.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  return opt;
}

const flagsOf = (spec: AdminCommand) => [...spec.options, ...COMMON_OPTIONS].map((o) => `--${o.flag}`);

function badOption(spec: AdminCommand, flag: string, all: readonly AdminCommand[]): DomainError {
  const owners = all.filter((c) => c !== spec && c.options.some((o) => `--${o.flag}` === flag)).map((c) => c.name);
  const valid = `its options are ${[...flagsOf(spec), '--help'].join(', ')}`;
  if (owners.length === 0) return invalid(`unknown option '${flag}' for 'admin ${spec.name}'; ${valid}`);
  const named = owners.length <= 3 ? owners.join(', ') : `${owners.slice(0, 3).join(', ')} and ${owners.length - 3} more`;
  return invalid(`'admin ${spec.name}' takes no ${flag} (an option of ${named}); ${valid}`);
}

/** The flags of a parsed command line, refused before any store is opened if they do not fit. */
function checked(spec: AdminCommand, cmd: Command, all: readonly AdminCommand[]): Flags {
  const [extra] = cmd.args;
  if (extra !== undefined) {
    if (extra.startsWith('-') && extra !== '-') throw badOption(spec, extra.split('=')[0]!, all);
    throw invalid(`'admin ${spec.name}' takes options only, not '${extra}'; ${`its options are ${flagsOf(spec).join(', ')}`}`);
  }
  const values = cmd.opts<Record<string, string | boolean | string[] | undefined>>();
  const flags: Flags = {};
  const known = new Set([...flagsOf(spec), '--help', '-h']);
  for (const o of cmd.options) {
    const name = o.long!.slice(2);
    const v = values[o.attributeName()];
    flags[name] = v;
    // `--workspace --json`: the value is missing and the next option was taken for it.
    for (const s of Array.isArray(v) ? v : [v]) {
      if (typeof s === 'string' && known.has(s.split('=')[0]!)) throw invalid(`--${name} needs a value, not the option ${s}`);
    }
  }
  for (const o of spec.options) if (o.required) need(flags, o.flag);
  return flags;
}

/** The action of `admin` and of a noun (`admin token`): reached only when no command was named. */
function noCommand(words: string[], all: readonly AdminCommand[]) {
  return (_opts: unknown, cmd: Command): never => {
    const names = all.filter((c) => words.length === 0 || c.name.startsWith(`${words[0]} `)).map((c) => c.name);
    const listed = `${words.length ? 'its' : 'the'} commands are ${names.join(', ')} (mediagen admin --help)`;
    const [first] = cmd.args;
    // The word this level dispatches on: a noun (`token`), or the verb after one (`create`).
    const isWord = (a: string) => names.some((n) => n.split(' ')[words.length] === a);
    if (first !== undefined && !first.startsWith('-')) throw invalid(`unknown admin command '${[...words, first].join(' ')}'; ${listed}`);
    if (first !== undefined && cmd.args.some(isWord)) {
      throw invalid(`options go after the command (mediagen admin <command> [options]), not '${first}' before it; ${listed}`);
    }
    throw invalid(words.length ? `incomplete admin command '${words[0]}'; ${listed}` : `missing admin command; ${listed}`);
  };
}

/**
 * Parses `mediagen admin ...` (commander): every command accepts only its own options and the
 * common ones, `--help` after any command prints that command's help, `--version` the package's
 * version. Returns undefined when help or the version was printed; throws a one-line refusal.
 */
export function parseAdmin(argv: readonly string[], all: readonly AdminCommand[], text: { help: string; version: string }): Chosen | undefined {
  let chosen: Chosen | undefined;
  const admin = quiet(new Command('admin'))
    .version(text.version, '-V, --version', 'print the version')
    .configureHelp({ formatHelp: () => text.help })
    .action(noCommand([], all));
  const nouns = new Map<string, Command>();
  for (const spec of all) {
    const [noun, verb] = spec.name.split(' ') as [string, string];
    let group = nouns.get(noun);
    if (!group) {
      group = quiet(new Command(noun)).action(noCommand([noun], all));
      nouns.set(noun, group);
      admin.addCommand(group);
    }
    const leaf = quiet(new Command(verb)).description(spec.who ? `${spec.summary} ${spec.who}` : spec.summary);
    for (const o of spec.options) leaf.addOption(toOption(o));
    leaf.optionsGroup('Store and output options:');
    for (const o of COMMON_OPTIONS) leaf.addOption(toOption(o));
    leaf.action((_opts: unknown, cmd: Command) => {
      chosen = { command: spec, flags: checked(spec, cmd, all) };
    });
    group.addCommand(leaf.summary(spec.summary));
  }
  for (const [noun, group] of nouns) {
    group.description(`${noun} commands: ${all.filter((c) => c.name.startsWith(`${noun} `)).map((c) => c.name.slice(noun.length + 1)).join(', ')}`);
  }
  try {
    quiet(new Command('mediagen')).addCommand(admin).parse(['admin', ...argv], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return undefined;
    // `--workspace` last, its value missing: worded as the action words `--workspace --json`.
    const missing = err.code === 'commander.optionMissingArgument' ? /'(--[\w-]+)/.exec(err.message) : null;
    if (missing) throw invalid(`${missing[1]} needs a value`);
    throw invalid(err.message.replace(/^error: /, ''));
  }
  return chosen;
}
