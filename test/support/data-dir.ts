import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Which of `needles` any file under `dir` holds (its bytes searched as they are), with the files: an
 * erased string must be in none, after the runtime's next start at the latest.
 */
export function foundUnder(dir: string, needles: readonly string[]): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    for (const needle of needles)
      if (bytes.includes(Buffer.from(needle, 'utf8'))) found[needle] = [...(found[needle] ?? []), file];
  }
  return found;
}
