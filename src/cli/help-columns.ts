/** Where an option's description starts in `--help`: after `  --`, a term of up to 25 characters and two spaces. */
const DESCRIPTION_COLUMN = 31;

/**
 * One option of a command's `--help`: its term (`keep-alive-timeout-ms VALUE`) and description
 * in two columns. A term too long for its column puts the description on the next line, at the
 * same column, so the two never run together.
 */
export function optionLine(term: string, description: string): string {
  const lead = `  --${term}`;
  if (lead.length <= DESCRIPTION_COLUMN - 2) return `${lead.padEnd(DESCRIPTION_COLUMN)}${description}`;
  return `${lead}\n${' '.repeat(DESCRIPTION_COLUMN)}${description}`;
}
