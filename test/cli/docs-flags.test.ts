import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every `mediagen <command> --flag` the README and docs/*.md show is an option of that command,
 * as its own `--help` (the built binary's) lists it: a doc that drifts from the code (issue 42:
 * docs saying `remote-worker` reads no config file while `--help` offers `--config`) fails here.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'dist', 'main.js');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
/** How the docs start the binary: `mediagen`, or `node dist/main.js` in the checkout. */
const INVOCATION = /(?:^|[\s`(])(?:mediagen|node dist\/main\.js)\s+/g;
const ALWAYS = new Set(['--help', '--version']);

interface Use {
  readonly command: string;
  readonly flag: string;
  readonly where: string;
}

/** The command lines of a Markdown file: inline code spans, and code-block lines (`\` continuations joined). */
function commandTexts(text: string): string[] {
  const texts: string[] = [];
  const blocks = text.split(/^```.*$/m);
  for (const [i, block] of blocks.entries()) {
    if (i % 2 === 1) texts.push(...block.replace(/\\\n/g, ' ').split('\n'));
    else texts.push(...[...block.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!));
  }
  return texts.filter((t) => /\bmediagen\s|node dist\/main\.js\s/.test(t));
}

/** Each invocation in `text`: its command words (up to the first argument that is not one) and its flags. */
function usesIn(text: string, where: string): Use[] {
  const starts = [...text.matchAll(INVOCATION)].map((m) => m.index + m[0].length);
  return starts.flatMap((start, i) => {
    const words = text.slice(start, starts[i + 1] ?? text.length).split(/\s+/);
    const command: string[] = [];
    for (const w of words) {
      if (!/^[a-z][a-z-]*$/.test(w) || command.length === 3) break;
      command.push(w);
    }
    const flags = new Set(words.flatMap((w) => [...w.matchAll(/(?:^|[[(|])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]!)));
    return command.length === 0 ? [] : [...flags].filter((f) => !ALWAYS.has(f)).map((flag) => ({ command: command.join(' '), flag, where }));
  });
}

function help(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...command.split(' '), '--help'], { timeout: 60_000, env: { PATH: process.env.PATH ?? '' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`mediagen ${command} --help failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

describe('the docs and --help agree', () => {
  it('every `mediagen <command> --flag` in README.md and docs/*.md is listed by that command\'s --help', async () => {
    const uses = DOCS.flatMap((doc) => commandTexts(readFileSync(join(ROOT, doc), 'utf8')).flatMap((t) => usesIn(t, doc)));
    // The extraction itself: the README shows these, so finding none would mean a broken reader.
    expect(uses).toContainEqual({ command: 'serve', flag: '--config', where: 'README.md' });
    expect(uses).toContainEqual({ command: 'remote-worker', flag: '--config', where: 'docs/engines.md' });
    const commands = [...new Set(uses.map((u) => u.command))];
    // A few at a time: each is a process start.
    const texts: string[] = [];
    for (let i = 0; i < commands.length; i += 4) {
      texts.push(...(await Promise.all(commands.slice(i, i + 4).map((c) => help(c).catch((err: Error) => `!${err.message}`)))));
    }
    const helps = new Map(commands.map((c, i) => [c, texts[i]!]));
    const missing: string[] = [];
    for (const use of uses) {
      const text = helps.get(use.command)!;
      if (text.startsWith('!')) missing.push(`${use.where}: mediagen ${use.command}: ${text.slice(1)}`);
      else if (!new RegExp(`(^|[\\s\\[|(,])${use.flag}(?![a-z0-9-])`, 'm').test(text)) missing.push(`${use.where}: mediagen ${use.command} ${use.flag}`);
    }
    expect([...new Set(missing)]).toEqual([]);
  }, 300_000);

  /** The options a command's --help lists (`  -x, --flag VALUE   text`), without --help. */
  const optionsOf = (text: string) => [...text.matchAll(/^ {2}(?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!).filter((f) => !ALWAYS.has(f));
  /** Whether `doc` names `flag`: as itself, or by a `--prefix-*` written there (`every --input-*`). */
  const names = (doc: string, flag: string) =>
    new RegExp(`${flag}(?![a-z0-9-])`).test(doc) || [...doc.matchAll(/`(--[a-z0-9-]+-)\*`/g)].some((m) => flag.startsWith(m[1]!));

  it('every option of serve, remote-worker and mcp --help is in docs/config.md, in that command\'s own section for remote-worker and mcp', async () => {
    const config = readFileSync(join(ROOT, 'docs', 'config.md'), 'utf8');
    const section = (heading: string) => {
      const start = config.indexOf(`\n## ${heading}\n`);
      expect(start, heading).toBeGreaterThan(0);
      const end = config.indexOf('\n## ', start + 1);
      return config.slice(start, end < 0 ? undefined : end);
    };
    const docs: Record<string, string> = { serve: config, 'remote-worker': section('`mediagen remote-worker`'), mcp: section('`mediagen mcp`') };
    const missing: string[] = [];
    for (const [command, doc] of Object.entries(docs)) {
      const options = optionsOf(await help(command));
      // The reader itself: each of these has options of its own.
      expect(options.length, command).toBeGreaterThan(1);
      missing.push(...options.filter((f) => !names(doc, f)).map((f) => `mediagen ${command} ${f}`));
    }
    expect(missing).toEqual([]);
  }, 120_000);
});
